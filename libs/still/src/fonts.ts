import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readFont } from '#libs/media';

/** A font file downloaded for one render (timeline.fonts), stored once per content. */
export interface RenderFont {
  families: string[];
  /** Path of the sfnt on local disk, handed to Pango as `fontfile`. */
  path: string;
}

/**
 * The font families this machine can draw: every family fontconfig lists (the shipped Debian font
 * packages of scripts/font-packages.txt), read once per process. Family names compare without case.
 */
export class FontCatalog {
  private readonly byKey: Map<string, string>;

  constructor(families: Iterable<string>, private readonly fontDir = join(tmpdir(), 'still-fonts')) {
    this.byKey = new Map([...families].map((f) => [f.toLowerCase(), f]));
  }

  /** Lists the installed families with `fc-list`; a machine without fontconfig has none. */
  static async system(fontDir?: string): Promise<FontCatalog> {
    const { stdout } = await promisify(execFile)('fc-list', ['--format', '%{family}\n'], { maxBuffer: 16 * 1024 * 1024 });
    const families = new Set<string>();
    for (const line of stdout.split('\n')) for (const name of line.split(',')) if (name.trim()) families.add(name.trim());
    return new FontCatalog(families, fontDir);
  }

  /** The installed spelling of a family, or undefined. */
  find(family: string): string | undefined {
    return this.byKey.get(family.trim().toLowerCase());
  }

  families(): string[] {
    return [...this.byKey.values()].sort((a, b) => a.localeCompare(b));
  }

  /**
   * Validates a downloaded font and writes it under the font directory, named by its content hash so
   * the same file is written once however many renders use it. Throws FontFileError for a bad file.
   */
  async install(bytes: Buffer): Promise<RenderFont> {
    const parsed = await readFont(bytes);
    const name = `${createHash('sha256').update(parsed.sfnt).digest('hex').slice(0, 32)}.${parsed.ext}`;
    const path = join(this.fontDir, name);
    const exists = await stat(path).then((s) => s.size === parsed.sfnt.length, () => false);
    if (!exists) {
      await mkdir(this.fontDir, { recursive: true });
      // A name of its own per write: two renders (or a PDF's print and its picture) installing the same
      // font in the same millisecond would otherwise share one temp file, and the second rename fail.
      const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      await writeFile(temp, parsed.sfnt);
      await rename(temp, path);
    }
    return { families: parsed.families, path };
  }
}

/** The families available to one render: the catalogue plus the render's own downloaded fonts. */
export class RenderFonts {
  constructor(
    private readonly catalog: FontCatalog,
    private readonly own: readonly RenderFont[] = [],
  ) {}

  /** How to draw `family`: its Pango name and, for a downloaded font, the file; undefined when unknown. */
  resolve(family: string): { family: string; file?: string } | undefined {
    const key = family.trim().toLowerCase();
    for (const font of this.own) {
      const name = font.families.find((f) => f.toLowerCase() === key);
      if (name) return { family: name, file: font.path };
    }
    const installed = this.catalog.find(family);
    return installed ? { family: installed } : undefined;
  }
}
