import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertEdit, type JsonValue } from '#libs/edit-spec';
import { VideoEngine } from '#libs/video';
import { mapFetcher } from '#testing/video';

/**
 * The test environment (test/setup/node-environment.mjs) answers `instanceof Error` as production's Node
 * does. Jest runs each file in a realm of its own, so an error Node itself makes (a refused `listen`, a
 * failed read) was not `instanceof Error` there, and library code that tells an error from a non-error
 * that way took another branch in tests than in production. Remotion's server start is one: it tries
 * another port after EADDRINUSE only for an `Error`, so in tests a port taken by another process between
 * Remotion's probe and its listen failed the render ("listen EADDRINUSE: address already in use :::3001",
 * the full suite at 2759571: two Jest workers rendering at once).
 */
describe('the test realm', () => {
  it("counts Node's own errors as instances of Error and its subclasses, as production does", async () => {
    const refused = await new Promise<unknown>((resolve) => {
      const taken = net.createServer().listen({ port: 0, host: '127.0.0.1' }, () => {
        const again = net.createServer();
        again.on('error', (err) => { taken.close(); resolve(err); });
        again.listen({ port: (taken.address() as net.AddressInfo).port, host: '127.0.0.1' });
      });
    });
    expect(refused).toBeInstanceOf(Error);
    expect((refused as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
    const badArgument = (() => { try { Buffer.alloc(-1); } catch (err) { return err; } })();
    expect(badArgument).toBeInstanceOf(RangeError);
    expect(badArgument).toBeInstanceOf(Error);
    // A rejection of Node's promise API too.
    const missing = await readFile(join(tmpdir(), 'node-realm-missing', 'none')).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(Error);
    expect((missing as NodeJS.ErrnoException).code).toBe('ENOENT');
    // Kinds stay apart, and the file's own classes are untouched.
    expect(badArgument).not.toBeInstanceOf(TypeError);
    class Mine extends Error {}
    expect(new Mine()).toBeInstanceOf(Error);
    expect(refused).not.toBeInstanceOf(Mine);
    expect(new Error('x')).not.toBeInstanceOf(Mine);
    expect({ message: 'x', name: 'Error' }).not.toBeInstanceOf(Error);
  });

  describe('a video render whose server port is taken between the probe and the listen', () => {
    let engine: VideoEngine;
    let out: string;
    const listen = net.Server.prototype.listen;
    const blockers: net.Server[] = [];

    beforeAll(async () => {
      out = await mkdtemp(join(tmpdir(), 'node-realm-test-'));
      engine = await VideoEngine.start({ fetch: mapFetcher(new Map()) });
    }, 60_000);

    afterAll(async () => {
      net.Server.prototype.listen = listen;
      await Promise.all(blockers.map((b) => new Promise((resolve) => b.close(resolve))));
      await engine?.close();
      await rm(out, { recursive: true, force: true });
    });

    it('renders on the next free port, as it does in production', async () => {
      // Remotion's server (serveStatic) listens on its chosen port with no callback; its probes pass one.
      // The first such listen finds the port just taken, as by another process that probed the same port.
      const taken: number[] = [];
      const refusals: (string | undefined)[] = [];
      net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
        const [opts] = args as [{ port?: number; host?: string } | undefined];
        if (taken.length === 0 && args.length === 1 && typeof opts === 'object' && opts.port !== undefined && opts.port >= 3000 && opts.port <= 3100) {
          taken.push(opts.port);
          const blocker = net.createServer();
          blockers.push(blocker);
          this.once('error', (err: NodeJS.ErrnoException) => refusals.push(err.code));
          const go = () => { listen.apply(this, args as Parameters<typeof listen>); };
          // Taken already by a real neighbour: the listen meets the same refusal without our blocker.
          blocker.on('error', go);
          listen.call(blocker, { port: opts.port, host: opts.host }, go);
          return this;
        }
        return listen.apply(this, args as Parameters<typeof listen>);
      } as typeof listen;

      const edit = assertEdit({
        timeline: { background: '#224488', tracks: [{ clips: [{ asset: { type: 'text', text: 'Hi', font: { family: 'Open Sans', size: 20, color: '#ffffff' } }, start: 0, length: 0.5 }] }] as JsonValue[] },
        output: { format: 'mp4', size: { width: 160, height: 90 }, fps: 12 },
      });
      const result = await engine.render(edit, { outputDir: out, renderId: 'rnd_port_race' });
      expect(taken).toHaveLength(1);
      expect(refusals).toEqual(['EADDRINUSE']);
      expect(result).toMatchObject({ format: 'mp4', frames: 6 });
    }, 60_000);
  });
});
