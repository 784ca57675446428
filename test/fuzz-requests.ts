/**
 * Generated bad requests (issue 21): bodies, query strings, path ids and headers for each route,
 * shaped from the route's OpenAPI operation (its parameters and body fields, so many requests get
 * past "unknown field" into the deeper rules) and then broken in the ways clients break them.
 * Used by test/fuzz.e2e-spec.ts (the routes walked from the controllers' metadata) and by
 * bench/fuzz.mjs (the routes of openapi.json, which is generated from that metadata). Plain,
 * erasable TypeScript: Node runs it as it is for the bench.
 */
import fc from 'fast-check';
import type { Arbitrary } from 'fast-check';

export type RouteAuthKind = 'key' | 'session' | 'public';

/** The part of an OpenAPI schema the generator reads. */
export interface Schema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  items?: Schema;
  properties?: Record<string, Schema>;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
}

export interface FuzzRoute {
  method: string;
  /** OpenAPI style, no prefix: `/v1/render/{id}`. */
  path: string;
  auth: RouteAuthKind;
  query: string[];
  body: Schema | null;
  multipart: boolean;
}

export interface FuzzAuth {
  key: string;
  session?: { token: string; org: string };
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

interface OpenApiOperation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema?: Schema }> };
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** The operation's query names and body schema, for a route found elsewhere (the controllers' metadata). */
export function operationShape(doc: OpenApiDoc, method: string, path: string): Pick<FuzzRoute, 'query' | 'body' | 'multipart'> {
  const op = doc.paths[path]?.[method];
  const content = op?.requestBody?.content ?? {};
  return {
    query: (op?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
    body: content['application/json']?.schema ?? null,
    multipart: 'multipart/form-data' in content,
  };
}

/** Every operation of an OpenAPI document as a route (security `apiKey` → key, `session` → session, none → public). */
export function routesOfOpenApi(doc: OpenApiDoc & { paths: Record<string, Record<string, OpenApiOperation & { security?: Record<string, unknown>[] }>> }): FuzzRoute[] {
  const routes: FuzzRoute[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      const auth: RouteAuthKind = schemes.includes('apiKey') ? 'key' : schemes.includes('session') ? 'session' : 'public';
      routes.push({ method, path, auth, ...operationShape(doc, method, path) });
    }
  }
  return routes;
}

const printable = (opts: { minLength?: number; maxLength?: number } = {}) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), ...opts });

/** Strings clients send by mistake or on purpose. */
const nastyString: Arbitrary<string> = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom(
    '', ' ', '\u0000', 'a\u0000b', '\ud800', '\uffff', '../../etc/passwd', '%00', '%zz', '-1', '0', '1e309', 'NaN', 'null', 'true',
    '<script>alert(1)</script>', "'; drop table renders; --", 'http://127.0.0.1:1/x', 'ftp://127.0.0.1/x', 'rnd_01HX0000000000000000000000',
    'tpl_01HX0000000000000000000000', '2026-02-30', '9999-12-31T23:59:59Z', '#ff00zz', 'x'.repeat(5000), 'é'.repeat(300), '🎬'.repeat(100),
  ),
);

const nastyNumber: Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 1, 0.5, 2 ** 31, 2 ** 53, -(2 ** 53), 1e308, -1e308, Number.MIN_VALUE),
);

const anyJson: Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    nastyNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(nastyString, fc.constantFrom('__proto__', 'constructor', 'toString')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

function resolve(schema: Schema, schemas: Record<string, Schema>): Schema {
  let s = schema;
  for (let i = 0; s.$ref && i < 10; i++) s = schemas[s.$ref.split('/').pop() ?? ''] ?? {};
  const parts = s.allOf ?? s.oneOf ?? s.anyOf;
  if (parts?.length) return resolve(parts[0], schemas);
  return s;
}

/** A value the schema asks for, often; a wrong one, sometimes. */
function valueFor(schema: Schema, schemas: Record<string, Schema>, depth: number): Arbitrary<unknown> {
  const s = resolve(schema, schemas);
  const wrong = depth > 3 ? fc.oneof(nastyString, nastyNumber, fc.constant(null)) : anyJson;
  let right: Arbitrary<unknown>;
  if (s.enum?.length) right = fc.constantFrom(...s.enum);
  else if (s.type === 'string') right = fc.oneof(printable({ maxLength: 40 }), nastyString);
  else if (s.type === 'integer' || s.type === 'number') right = fc.oneof(fc.integer({ min: -5, max: 5000 }), nastyNumber);
  else if (s.type === 'boolean') right = fc.boolean();
  else if (s.type === 'array') right = depth > 3 ? fc.constant([]) : fc.array(valueFor(s.items ?? {}, schemas, depth + 1), { maxLength: 4 });
  else if (s.properties && depth <= 3) right = objectFor(s, schemas, depth + 1);
  else right = wrong;
  return fc.oneof({ weight: 4, arbitrary: right }, { weight: 1, arbitrary: wrong });
}

/** Some of the schema's fields (and now and then one it does not know). */
function objectFor(schema: Schema, schemas: Record<string, Schema>, depth: number): Arbitrary<Record<string, unknown>> {
  const props = Object.entries(resolve(schema, schemas).properties ?? {});
  const known = props.length
    ? fc.subarray(props).chain((chosen) => fc.tuple(...chosen.map(([name, sub]) => valueFor(sub, schemas, depth).map((v) => [name, v] as const))))
    : fc.constant([] as (readonly [string, unknown])[]);
  const extra = fc.option(fc.tuple(nastyString, anyJson), { freq: 6, nil: undefined });
  return fc.tuple(known, extra).map(([pairs, more]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of pairs) out[k] = v;
    if (more) out[more[0]] = more[1];
    return out;
  });
}

/** JSON text that nests arrays a few thousand levels deep inside a plausible field. */
const deepJson = fc.integer({ min: 60, max: 4000 }).map((n) => `{"edit":{"timeline":${'['.repeat(n)}${']'.repeat(n)}}}`);

/** Raw bytes that are not what the content type says. */
const garbageText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('{', '{"a":', '[1,2', '{"a":1}}', 'null', '"str"', '42', '\u0000', '{"a":"\\u0000"}', '{"__proto__":{"x":1}}', '\ufeff{}'),
);

function bodyFor(route: FuzzRoute, schemas: Record<string, Schema>): Arbitrary<{ payload?: string | Buffer; type?: string }> {
  const json = (v: unknown) => ({ payload: JSON.stringify(v), type: 'application/json' });
  if (route.multipart) {
    return fc.oneof(
      fc.tuple(fc.string({ maxLength: 20 }), fc.uint8Array({ maxLength: 64 }), printable({ maxLength: 30 })).map(([name, bytes, filename]) => {
        const b = 'fuzzboundary';
        const head = `--${b}\r\nContent-Disposition: form-data; name="${name.replace(/["\r\n]/g, '')}"; filename="${filename.replace(/"/g, '')}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
        return { payload: Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(`\r\n--${b}--\r\n`)]), type: `multipart/form-data; boundary=${b}` };
      }),
      garbageText.map((t) => ({ payload: t, type: 'multipart/form-data; boundary=x' })),
      garbageText.map((t) => ({ payload: t, type: 'multipart/form-data' })),
      anyJson.map(json),
    );
  }
  const shaped = route.body ? objectFor(route.body, schemas, 0).map(json) : fc.dictionary(nastyString, anyJson, { maxKeys: 3 }).map(json);
  return fc.oneof(
    { weight: 8, arbitrary: shaped },
    { weight: 2, arbitrary: anyJson.map(json) },
    { weight: 1, arbitrary: deepJson.map((payload) => ({ payload, type: 'application/json' })) },
    { weight: 1, arbitrary: garbageText.map((payload) => ({ payload, type: 'application/json' })) },
    { weight: 1, arbitrary: fc.tuple(garbageText, fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'application/json; charset=latin1', 'multipart/form-data; boundary=x')).map(([payload, type]) => ({ payload, type })) },
    { weight: 1, arbitrary: fc.constant({ payload: '', type: 'application/json' }) },
    { weight: 1, arbitrary: fc.constant({}) },
  );
}

/** encodeURIComponent, except that a lone surrogate (which it refuses) goes as its UTF-8-ish bytes, raw. */
function encode(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s.replace(/[\ud800-\udfff]/g, '%ED%A0%80').replace(/[^%\w.-]/g, (c) => encodeURIComponent(c));
  }
}

const pathId: Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: nastyString.map(encode) },
  { weight: 1, arbitrary: fc.constantFrom('%00', 'a%00b', '%zz', '%', '..', '%2F', '%2e%2e', 'rnd_01HX0000000000000000000000', '%E0%A4%A', '%ED%A0%80') },
  { weight: 1, arbitrary: fc.integer({ min: 90, max: 4000 }).map((n) => 'a'.repeat(n)) },
);

const LIST_KEYS = ['page', 'limit', 'sort', 'order', 'search', 'status', 'type', 'kind', 'createdFrom', 'createdTo', 'pageToken'];

function queryFor(route: FuzzRoute): Arbitrary<string> {
  const keys = [...new Set([...route.query, ...LIST_KEYS])];
  const pair = fc.tuple(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: nastyString }), fc.oneof(nastyString, nastyNumber.map(String)));
  const raw = fc.constantFrom('', '&', '=', '%zz', 'search=%', 'page=%00', 'a[b]=1', 'limit=1&limit=2', 'search=%ED%A0%80');
  return fc.tuple(fc.array(pair, { maxLength: 4 }), fc.option(raw, { freq: 4, nil: undefined })).map(([pairs, extra]) => {
    const parts = pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`);
    if (extra !== undefined) parts.push(extra);
    return parts.length ? `?${parts.join('&')}` : '';
  });
}

const HEADER_NAMES = ['x-request-id', 'idempotency-key', 'accept', 'user-agent', 'x-forwarded-for', 'accept-encoding', 'if-none-match', 'range', 'origin'];

function headersFor(route: FuzzRoute, auth: FuzzAuth): Arbitrary<Record<string, string>> {
  const value = fc.oneof(printable({ maxLength: 60 }), printable({ minLength: 129, maxLength: 400 }), fc.constantFrom('', ' ', '*/*', 'bytes=0-', 'gzip'));
  const extra = fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES), value), { maxLength: 3 });
  const authMode = fc.constantFrom('right', 'right', 'right', 'right', 'right', 'right', 'junk', 'none');
  return fc.tuple(extra, authMode, printable({ maxLength: 60 })).map(([pairs, mode, junk]) => {
    const headers: Record<string, string> = Object.fromEntries(pairs);
    const session = route.auth === 'session' || route.path.startsWith('/auth/');
    if (mode === 'junk') {
      headers[session ? 'authorization' : 'x-api-key'] = session ? `Bearer ${junk}` : junk;
      if (session) headers['x-service-org'] = junk;
    } else if (mode === 'right') {
      if (route.auth === 'key') headers['x-api-key'] = auth.key;
      // Never the real session on sign-out (it would end the session the other requests use).
      if (route.auth === 'session' && auth.session && !route.path.endsWith('/sign-out')) {
        headers.authorization = `Bearer ${auth.session.token}`;
        headers['x-service-org'] = auth.session.org;
      }
    }
    return headers;
  });
}

/** One generated request to one of `routes` (URLs carry `prefix`, e.g. `/api`). */
export function fuzzRequest(routes: FuzzRoute[], auth: FuzzAuth, schemas: Record<string, Schema>, prefix = '/api'): Arbitrary<FuzzRequest> {
  return fc.constantFrom(...routes).chain((route) => {
    const params = route.path.match(/\{\w+\}/g) ?? [];
    const hasBody = ['post', 'put', 'patch', 'delete'].includes(route.method);
    return fc
      .tuple(fc.tuple(...params.map(() => pathId)), queryFor(route), headersFor(route, auth), hasBody ? bodyFor(route, schemas) : fc.constant({}))
      .map(([ids, query, headers, body]: [string[], string, Record<string, string>, { payload?: string | Buffer; type?: string }]) => {
        let i = 0;
        const path = route.path.replace(/\{\w+\}/g, () => ids[i++]);
        const all = { ...headers, ...(body.type ? { 'content-type': body.type } : {}) };
        return { method: route.method.toUpperCase(), url: `${prefix}${path}${query}`, headers: all, ...(body.payload !== undefined ? { payload: body.payload } : {}) };
      });
  });
}

/**
 * What every answer must be (§1 conventions, §7): below 500; an error is the JSON envelope with a
 * code of the table (or a house code) whose status is the one answered. Returns the problem, or null.
 */
export function envelopeProblem(status: number, contentType: string | undefined, text: string, method: string, codes: Record<string, number>): string | null {
  if (status >= 500) return `answered ${status}: ${text.slice(0, 300)}`;
  if (method === 'HEAD' || status === 204 || status === 304) return null;
  const isJson = (contentType ?? '').startsWith('application/json');
  if (status < 400) return null; // success bodies (files, binary stills) are each route's own
  if (!isJson) return `answered ${status} as ${contentType ?? 'no content type'}: ${text.slice(0, 200)}`;
  let body: { success?: unknown; code?: unknown; message?: unknown; data?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    return `answered ${status} with JSON that does not parse: ${text.slice(0, 200)}`;
  }
  if (body.success !== false || typeof body.message !== 'string' || !('data' in body)) return `not the envelope: ${text.slice(0, 300)}`;
  if (typeof body.code !== 'string' || codes[body.code] === undefined) return `unknown code ${String(body.code)}`;
  if (codes[body.code] !== status) return `code ${body.code} is ${codes[body.code]}, answered ${status}`;
  return null;
}
