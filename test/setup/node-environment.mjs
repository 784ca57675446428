// Jest's Node environment, with one change: `instanceof Error` (and its built-in subclasses) answers as in
// production's Node. Each test file runs in a realm of its own (a vm context), so an error Node itself
// makes (a refused listen, a failed read) is an instance of the outer realm's Error, not the file's, and
// library code that tells errors apart that way took another branch under test than in production:
// Remotion's server start retries a port taken by another process only for an `Error`, and failed the
// render instead (test/node-realm.spec.ts). The file's own classes and kinds are untouched: a built-in
// constructor of the file also accepts its outer-realm twin, and nothing else.
import { TestEnvironment } from 'jest-environment-node';

/** Every built-in error constructor of a realm (Error, TypeError, …, SuppressedError, WebAssembly's), by name. */
function errorKinds(realm) {
  const kinds = new Map();
  for (const [owner, prefix] of [[realm, ''], [realm.WebAssembly ?? {}, 'WebAssembly.']]) {
    for (const name of Object.getOwnPropertyNames(owner)) {
      const value = owner[name];
      if (name.endsWith('Error') && typeof value === 'function') kinds.set(prefix + name, value);
    }
  }
  return kinds;
}
const ordinary = Function.prototype[Symbol.hasInstance];

export default class NodeRealmEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    const inner = this.global;
    const outer = errorKinds(globalThis);
    const twins = new Map([...errorKinds(inner)].filter(([name]) => outer.has(name)).map(([name, ctor]) => [ctor, outer.get(name)]));
    // On Error only: its subclasses (the built-in kinds and the file's own classes) inherit the method, and
    // `this` is the constructor on the right of `instanceof`.
    Object.defineProperty(inner.Error, Symbol.hasInstance, {
      value(value) {
        if (ordinary.call(this, value)) return true;
        const twin = twins.get(this);
        return twin !== undefined && ordinary.call(twin, value);
      },
    });
  }
}
