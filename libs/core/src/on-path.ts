import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Whether `path` is a file this process may execute. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `name` found on PATH (or the path itself when it has a slash): what a spawn of it would run. */
export function onPath(name: string): string | undefined {
  if (name.includes('/')) return isExecutable(name) ? name : undefined;
  return (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name)).find(isExecutable);
}
