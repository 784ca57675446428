import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer, receive } from '#testing/integrations';
import { codeChallenge, columnLetters, parseA1, type Cell, type GoogleContactGroup, type GooglePerson } from '#libs/suite';

/**
 * A loopback fake of Google's side of workspace-suite, speaking its wire formats for tests and the
 * bench: the OAuth 2 token endpoint (`POST /token`, grant_type=refresh_token, `invalid_grant`,
 * `invalid_client`), Drive v3 `files.list` (the `q` spreadsheet filter, `name contains`, pages),
 * Sheets v4 `spreadsheets.get`, `spreadsheets.create` (with GridData), `values.get`
 * (valueRenderOption), `values.append` and `values.update` (valueInputOption RAW / USER_ENTERED),
 * People v1 `people/me/connections` (personFields, pageSize ≤ 1000, pageToken, totalPeople),
 * `people:searchContacts` (query, readMask, pageSize ≤ 30; word-prefix matching) and `contactGroups`
 * (memberCount, formattedName), Google's error bodies (`{"error": {code, message, status}}`), and
 * failures on demand.
 */

/** A contact as a test writes it; the fake stores it as People's Person. */
export interface FakeContactInput {
  given?: string;
  family?: string;
  emails?: string[];
  phones?: string[];
  organization?: string;
  title?: string;
  city?: string;
  country?: string;
  photoUrl?: string;
  notes?: string;
  /** Contact group ids (`addGroup`'s, or `myContacts`, `starred`). */
  groups?: string[];
}

const SYSTEM_GROUPS: Record<string, string> = { myContacts: 'My Contacts', starred: 'Starred' };

interface StoredCell {
  value: Cell;
  formula?: string;
}

interface FakeSheet {
  sheetId: number;
  title: string;
  rows: (StoredCell | undefined)[][];
}

interface FakeSpreadsheet {
  id: string;
  title: string;
  modifiedTime: string;
  sheets: FakeSheet[];
}

export interface FakeGoogleRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization?: string;
  json?: unknown;
  form?: Record<string, string>;
  /** Bytes of the body (uploads). */
  bodyBytes: number;
  headers: Record<string, string | string[] | undefined>;
}

/** A Drive file or folder in the fake (`content`: its bytes; none for folders and Google-native documents). */
export interface FakeDriveFile {
  id: string;
  name: string;
  mimeType: string;
  parents: string[];
  content?: Buffer;
}

interface UploadSession {
  metadata: { name?: string; mimeType?: string; parents?: string[] };
  contentType: string;
  length: number | null;
}

/** `server-error`: 500; `rate-limit`: 429; `hang`: never answered; `malformed`: 200 with broken JSON. */
export type GoogleFakeFailure = 'server-error' | 'rate-limit' | 'hang' | 'malformed';

const googleError = (code: number, status: string, message: string) => ({ error: { code, message, status } });
const FOLDER = 'application/vnd.google-apps.folder';

export class GoogleFake {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly refreshToken = `1//${randomBytes(24).toString('hex')}`;
  /** The access token Google accepts now (the connection starts with it). */
  accessToken = `ya29.${randomBytes(24).toString('hex')}`;
  readonly requests: FakeGoogleRequest[] = [];
  baseUrl = '';
  /** The Google account that consents (its email, as Drive's about.get names it). */
  accountEmail = 'ops@example.com';
  /** A failure for the next `failTimes` API calls (the token endpoint excepted). */
  failure: GoogleFakeFailure | null = null;
  failTimes = Infinity;
  /** How long the token endpoint takes (so concurrent refreshes would overlap). */
  tokenDelayMs = 150;
  private grantRevoked = false;
  private readonly files = new Map<string, FakeSpreadsheet>();
  /** Drive's files and folders (spreadsheets live in `files`). */
  readonly drive = new Map<string, FakeDriveFile>();
  /** Open resumable upload sessions by upload_id. */
  readonly uploadSessions = new Map<string, UploadSession>();
  /** Codes the consent page issued, by code: the PKCE challenge and redirect they were issued for. */
  private readonly codes = new Map<string, { challenge: string; redirectUri: string }>();
  /** Only requests this matches get `failure` (null: every API call). */
  failOn: ((r: FakeGoogleRequest) => boolean) | null = null;
  private readonly people: GooglePerson[] = [];
  private readonly groups = new Map<string, string>(Object.entries(SYSTEM_GROUPS));
  private readonly server = new LoopbackServer((req, res) => void this.handle(req, res), { keepAliveTimeoutMs: 30_000 });

  /** `client`: the OAuth client this Google knows (one deployment's client, shared by several fakes of several accounts). */
  constructor(client?: { clientId: string; clientSecret: string }) {
    this.clientId = client?.clientId ?? `${randomBytes(6).toString('hex')}.apps.googleusercontent.com`;
    this.clientSecret = client?.clientSecret ?? `GOCSPX-${randomBytes(12).toString('hex')}`;
  }

  /** Token refreshes asked for. */
  get refreshes(): FakeGoogleRequest[] {
    return this.requests.filter((r) => r.path === '/token');
  }

  /** The API calls (not the token endpoint). */
  get apiCalls(): FakeGoogleRequest[] {
    return this.requests.filter((r) => r.path !== '/token');
  }

  /** The current access token stops working (it expired at Google): the next call answers 401. */
  expireAccessToken(): void {
    this.accessToken = `ya29.${randomBytes(24).toString('hex')}`;
  }

  /** The user revoked the app's access: refreshes answer 400 invalid_grant. */
  revokeGrant(): void {
    this.grantRevoked = true;
    this.expireAccessToken();
  }

  /** A spreadsheet owned by the account; its rows are written as RAW values. */
  seed(title: string, tabs: { title: string; rows: Cell[][] }[] = [{ title: 'Sheet1', rows: [] }], modifiedTime = new Date().toISOString()): string {
    const id = `1${randomBytes(21).toString('base64url')}`;
    this.files.set(id, {
      id, title, modifiedTime,
      sheets: tabs.map((t, i) => ({ sheetId: i === 0 ? 0 : 1000 + i, title: t.title, rows: t.rows.map((r) => r.map((v) => (v === null ? undefined : { value: v }))) })),
    });
    return id;
  }

  /** A contact in the account (in `myContacts` unless `groups` says otherwise); its id (`c…`). */
  addContact(c: FakeContactInput): string {
    const id = `c${BigInt(`0x${randomBytes(7).toString('hex')}`).toString()}`;
    // Google marks the primary entry of each field `metadata.primary`; the others carry no flag.
    const entry = <T extends object>(v: T, i: number) => ({ metadata: i === 0 ? { primary: true } : {}, ...v });
    const display = [c.given, c.family].filter(Boolean).join(' ');
    this.people.push({
      resourceName: `people/${id}`,
      ...(display ? { names: [entry({ displayName: display, givenName: c.given, familyName: c.family }, 0)] } : {}),
      ...(c.emails?.length ? { emailAddresses: c.emails.map((value, i) => entry({ value }, i)) } : {}),
      ...(c.phones?.length ? { phoneNumbers: c.phones.map((value, i) => entry({ value, canonicalForm: `+${value.replace(/\D/g, '')}` }, i)) } : {}),
      ...(c.organization || c.title ? { organizations: [entry({ name: c.organization, title: c.title }, 0)] } : {}),
      ...(c.city || c.country ? { addresses: [entry({ city: c.city, country: c.country }, 0)] } : {}),
      photos: [{ metadata: { primary: true }, url: c.photoUrl ?? 'https://lh3.googleusercontent.com/cm/placeholder', ...(c.photoUrl ? {} : { default: true }) }],
      ...(c.notes ? { biographies: [entry({ value: c.notes, contentType: 'TEXT_PLAIN' }, 0)] } : {}),
      memberships: (c.groups ?? ['myContacts']).map((g) => ({ contactGroupMembership: { contactGroupId: g, contactGroupResourceName: `contactGroups/${g}` } })),
    });
    return id;
  }

  /** A user contact group (label); its id. */
  addGroup(name: string): string {
    const id = randomBytes(8).toString('hex');
    this.groups.set(id, name);
    return id;
  }

  /** A tab's values as UNFORMATTED_VALUE reads them (null: empty). */
  grid(id: string, tab: string): Cell[][] {
    const sheet = this.files.get(id)?.sheets.find((s) => s.title === tab);
    return (sheet?.rows ?? []).map((r) => Array.from(r, (c) => c?.value ?? null));
  }

  spreadsheets(): { id: string; title: string; tabs: string[] }[] {
    return [...this.files.values()].map((f) => ({ id: f.id, title: f.title, tabs: f.sheets.map((s) => s.title) }));
  }

  async start(): Promise<this> {
    this.baseUrl = await this.server.start();
    return this;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { method, url, query, body: raw } = await receive(req);
    const body = raw.toString('utf8');
    const record: FakeGoogleRequest = {
      method, path: url.pathname, query, authorization: req.headers.authorization, bodyBytes: raw.length, headers: req.headers,
    };
    if (body && String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded')) record.form = Object.fromEntries(new URLSearchParams(body));
    else if (body && String(req.headers['content-type']).startsWith('application/json')) {
      try {
        record.json = JSON.parse(body) as unknown;
      } catch { /* answered 400 below */ }
    }
    this.requests.push(record);
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(value));
    };
    if (url.pathname === '/token') return this.token(record, json);
    if (url.pathname === '/auth') return this.consent(record, res, json);
    if (this.failure && this.failTimes > 0 && (!this.failOn || this.failOn(record))) {
      this.failTimes -= 1;
      if (this.failure === 'hang') return;
      if (this.failure === 'server-error') return json(500, googleError(500, 'INTERNAL', 'Internal error encountered.'));
      if (this.failure === 'rate-limit') return json(429, googleError(429, 'RESOURCE_EXHAUSTED', "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per user' of service 'sheets.googleapis.com'."));
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"range": "Sheet1!A1:B2", "values": [["a", ');
    }
    if (record.authorization !== `Bearer ${this.accessToken}`) {
      return json(401, googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'));
    }
    if (req.method === 'GET' && url.pathname === '/drive/v3/about') return json(200, { user: { kind: 'drive#user', displayName: 'Ops Team', emailAddress: this.accountEmail } });
    if (req.method === 'GET' && url.pathname === '/drive/v3/files') {
      return (record.query.q ?? '').includes('application/vnd.google-apps.spreadsheet') ? this.listFiles(record, json) : this.listDrive(record, json);
    }
    if (req.method === 'POST' && url.pathname === '/drive/v3/files') return this.createDriveFile(record, json);
    if (url.pathname === '/upload/drive/v3/files') return this.upload(record, raw, res, json);
    const driveFile = /^\/drive\/v3\/files\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && driveFile) return this.getDriveFile(decodeURIComponent(driveFile[1]!), record, res, json);
    if (req.method === 'GET' && url.pathname === '/v1/people/me/connections') return this.connections(record, json);
    if (req.method === 'GET' && url.pathname === '/v1/people:searchContacts') return this.searchContacts(record, json);
    if (req.method === 'GET' && url.pathname === '/v1/contactGroups') return this.contactGroups(record, json);
    if (req.method === 'POST' && url.pathname === '/v4/spreadsheets') return this.create(record, json);
    const m = /^\/v4\/spreadsheets\/([^/]+)(?:\/values\/([^/]+?))?(:append)?$/.exec(url.pathname);
    if (!m) return json(404, googleError(404, 'NOT_FOUND', `Method not found: ${url.pathname}`));
    const file = this.files.get(decodeURIComponent(m[1]!));
    if (!file) return json(404, googleError(404, 'NOT_FOUND', 'Requested entity was not found.'));
    if (!m[2]) return req.method === 'GET' ? json(200, this.detail(file)) : json(404, googleError(404, 'NOT_FOUND', 'Not found'));
    const target = this.target(file, decodeURIComponent(m[2]));
    if (!target) return json(400, googleError(400, 'INVALID_ARGUMENT', `Unable to parse range: ${decodeURIComponent(m[2])}`));
    if (req.method === 'GET') return this.read(file, target, record, json);
    return this.write(file, target, record, !!m[3], json);
  }

  private async token(record: FakeGoogleRequest, json: (s: number, v: unknown) => void): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, this.tokenDelayMs));
    const f = record.form ?? {};
    if (f.client_id !== this.clientId || f.client_secret !== this.clientSecret) return json(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
    if (f.grant_type === 'authorization_code') {
      const grant = this.codes.get(f.code ?? '');
      // A code is good for one exchange, right or wrong.
      this.codes.delete(f.code ?? '');
      if (!grant) return json(400, { error: 'invalid_grant', error_description: 'Malformed auth code.' });
      if (!f.code_verifier || codeChallenge(f.code_verifier) !== grant.challenge) return json(400, { error: 'invalid_grant', error_description: 'Invalid code verifier.' });
      if (f.redirect_uri !== grant.redirectUri) return json(400, { error: 'redirect_uri_mismatch', error_description: 'Bad Request' });
      this.grantRevoked = false;
      this.accessToken = `ya29.${randomBytes(24).toString('hex')}`;
      return json(200, { access_token: this.accessToken, expires_in: 3599, refresh_token: this.refreshToken, scope: 'https://www.googleapis.com/auth/drive https://www.googleapis.com/auth/spreadsheets', token_type: 'Bearer', id_token: 'eyJ.fake.jwt' });
    }
    if (f.grant_type !== 'refresh_token') return json(400, { error: 'unsupported_grant_type', error_description: `Invalid grant_type: ${f.grant_type ?? ''}` });
    if (this.grantRevoked || f.refresh_token !== this.refreshToken) return json(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
    this.accessToken = `ya29.${randomBytes(24).toString('hex')}`;
    json(200, { access_token: this.accessToken, expires_in: 3599, scope: 'https://www.googleapis.com/auth/spreadsheets https://www.googleapis.com/auth/drive.file', token_type: 'Bearer' });
  }

  /**
   * The consent page (`GET /auth`), the user agreeing at once: the client, `response_type=code`, an
   * S256 `code_challenge` and a `redirect_uri` are required; answers 302 to the redirect with `code` and `state`.
   */
  private consent(record: FakeGoogleRequest, res: ServerResponse, json: (s: number, v: unknown) => void): void {
    const q = record.query;
    if (q.client_id !== this.clientId) return json(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
    if (q.response_type !== 'code' || !q.redirect_uri || !q.scope) return json(400, { error: 'invalid_request', error_description: 'Required parameter is missing: response_type, redirect_uri or scope' });
    if (q.code_challenge_method !== 'S256' || !/^[\w-]{43}$/.test(q.code_challenge ?? '')) return json(400, { error: 'invalid_request', error_description: 'Invalid code_challenge or code_challenge_method' });
    const to = new URL(q.redirect_uri);
    to.searchParams.set('state', q.state ?? '');
    // A browser (Accept: text/html) sees the consent page and chooses; other clients agree at once.
    if (String(record.headers?.accept ?? '').includes('text/html') && q.decision === undefined) {
      const again = (decision: string) => {
        const url = new URL(`${this.baseUrl}/auth`);
        for (const [k, v] of Object.entries(q)) url.searchParams.set(k, v);
        url.searchParams.set('decision', decision);
        return url.toString().replaceAll('&', '&amp;').replaceAll('"', '&quot;');
      };
      const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign in - Google Accounts</title></head><body><main>`
        + `<h1>${this.accountEmail} is signing in to a media rendering API</h1><p>It wants to see, edit, create and delete your spreadsheets and Drive files, and see your contacts.</p>`
        + `<a href="${again('allow')}">Allow</a> <a href="${again('deny')}">Cancel</a></main></body></html>`;
      return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    }
    if (q.decision === 'deny') {
      to.searchParams.set('error', 'access_denied');
      return void res.writeHead(302, { location: to.toString() }).end();
    }
    const code = `4/0${randomBytes(24).toString('base64url')}`;
    this.codes.set(code, { challenge: q.code_challenge!, redirectUri: q.redirect_uri });
    to.searchParams.set('code', code);
    to.searchParams.set('scope', q.scope);
    res.writeHead(302, { location: to.toString() }).end();
  }

  private listFiles(record: FakeGoogleRequest, json: (s: number, v: unknown) => void): void {
    const q = record.query.q ?? '';
    if (!q.includes("mimeType = 'application/vnd.google-apps.spreadsheet'")) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid Value'));
    const contains = /name contains '((?:[^'\\]|\\.)*)'/.exec(q)?.[1]?.replace(/\\(.)/g, '$1');
    const size = Number(record.query.pageSize ?? 100);
    let offset = 0;
    if (record.query.pageToken) {
      offset = Number(Buffer.from(record.query.pageToken, 'base64url').toString('utf8').replace(/^offset:/, ''));
      if (!Number.isInteger(offset)) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid Value'));
    }
    const all = [...this.files.values()]
      .filter((f) => contains === undefined || f.title.toLowerCase().includes(contains.toLowerCase()))
      .sort((a, b) => b.modifiedTime.localeCompare(a.modifiedTime) || a.title.localeCompare(b.title));
    const page = all.slice(offset, offset + size);
    json(200, {
      files: page.map((f) => ({ id: f.id, name: f.title, webViewLink: `https://docs.google.com/spreadsheets/d/${f.id}/edit?usp=drivesdk`, modifiedTime: f.modifiedTime })),
      ...(offset + size < all.length ? { nextPageToken: Buffer.from(`offset:${offset + size}`).toString('base64url') } : {}),
    });
  }

  /** A file in Drive (in `parents`, `root` by default); its id. */
  addDriveFile(name: string, mimeType: string, content?: Buffer, parents: string[] = ['root']): string {
    const id = `1${randomBytes(16).toString('base64url')}`;
    this.drive.set(id, { id, name, mimeType, parents, ...(content ? { content } : {}) });
    return id;
  }

  private driveView(f: FakeDriveFile, fields: string | undefined): Record<string, unknown> {
    const all: Record<string, unknown> = {
      kind: 'drive#file', id: f.id, name: f.name, mimeType: f.mimeType,
      ...(f.content ? { size: String(f.content.length) } : {}),
      webViewLink: f.mimeType === FOLDER ? `https://drive.google.com/drive/folders/${f.id}` : `https://drive.google.com/file/d/${f.id}/view?usp=drivesdk`,
    };
    // files(...) or a bare list: only the fields asked for (Drive's partial responses); none asked: Drive's defaults.
    const wanted = /files\(([^)]*)\)/.exec(fields ?? '')?.[1] ?? fields;
    if (!wanted) return { kind: all.kind, id: all.id, name: all.name, mimeType: all.mimeType };
    return Object.fromEntries(wanted.split(',').map((k) => k.trim()).filter((k) => k in all).map((k) => [k, all[k]]));
  }

  private notFound(id: string) {
    const message = `File not found: ${id}.`;
    return { error: { code: 404, message, errors: [{ message, domain: 'global', reason: 'notFound', location: 'fileId', locationType: 'parameter' }] } };
  }

  /** files.list over Drive's files: the `q` clauses the service writes (parents, trashed, name contains, mimeType = / contains, or-groups). */
  private listDrive(record: FakeGoogleRequest, json: (s: number, v: unknown) => void): void {
    const size = Number(record.query.pageSize ?? 100);
    if (!Number.isInteger(size) || size < 1 || size > 1000) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid value for pageSize'));
    const literal = (t: string) => t.replace(/^'|'$/g, '').replace(/\\(.)/g, '$1');
    const test = (clause: string): ((f: FakeDriveFile) => boolean) | null => {
      clause = clause.trim().replace(/^\(|\)$/g, '');
      if (clause.includes(' or ')) {
        const parts = clause.split(' or ').map(test);
        return parts.every(Boolean) ? (f) => parts.some((p) => p!(f)) : null;
      }
      const arg = (re: RegExp): string | undefined => { const v = re.exec(clause)?.[1]; return v === undefined ? undefined : literal(v); };
      const LIT = "('(?:[^'\\\\]|\\\\.)*')";
      if (clause === 'trashed = false') return () => true;
      const parent = arg(new RegExp(`^${LIT} in parents$`));
      if (parent !== undefined) return (f) => f.parents.includes(parent);
      const name = arg(new RegExp(`^name contains ${LIT}$`));
      if (name !== undefined) return (f) => f.name.toLowerCase().includes(name.toLowerCase());
      const mime = arg(new RegExp(`^mimeType = ${LIT}$`));
      if (mime !== undefined) return (f) => f.mimeType === mime;
      const part = arg(new RegExp(`^mimeType contains ${LIT}$`));
      if (part !== undefined) return (f) => f.mimeType.includes(part);
      return null;
    };
    const tests = (record.query.q ?? '').split(/ and (?![^(]*\))/).filter(Boolean).map(test);
    if (tests.some((t) => t === null)) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid Value'));
    let offset = 0;
    if (record.query.pageToken) {
      offset = Number(/^drive-offset:(\d+)$/.exec(Buffer.from(record.query.pageToken, 'base64url').toString('utf8'))?.[1]);
      if (!Number.isInteger(offset)) return json(400, { error: { code: 400, message: 'Invalid Value', errors: [{ domain: 'global', reason: 'invalid', message: 'Invalid Value', locationType: 'parameter', location: 'pageToken' }] } });
    }
    const folderFirst = (record.query.orderBy ?? '').startsWith('folder');
    const all = [...this.drive.values()].filter((f) => tests.every((t) => t!(f)))
      .sort((a, b) => (folderFirst ? Number(b.mimeType === FOLDER) - Number(a.mimeType === FOLDER) : 0) || a.name.localeCompare(b.name));
    json(200, {
      kind: 'drive#fileList', incompleteSearch: false,
      files: all.slice(offset, offset + size).map((f) => this.driveView(f, record.query.fields)),
      ...(offset + size < all.length ? { nextPageToken: Buffer.from(`drive-offset:${offset + size}`).toString('base64url') } : {}),
    });
  }

  private parentsMissing(parents: string[] | undefined): string | undefined {
    return (parents ?? []).find((p) => p !== 'root' && this.drive.get(p)?.mimeType !== FOLDER);
  }

  /** files.create without content (a folder, or an empty file's metadata). */
  private createDriveFile(record: FakeGoogleRequest, json: (s: number, v: unknown) => void): void {
    const meta = (record.json ?? {}) as { name?: string; mimeType?: string; parents?: string[] };
    const missing = this.parentsMissing(meta.parents);
    if (missing) return json(404, this.notFound(missing));
    const id = this.addDriveFile(meta.name ?? 'Untitled', meta.mimeType ?? 'application/octet-stream', undefined, meta.parents ?? ['root']);
    json(200, this.driveView(this.drive.get(id)!, record.query.fields));
  }

  /**
   * Resumable uploads: POST ?uploadType=resumable (metadata; X-Upload-Content-Type/-Length) → 200 and
   * the session URI in Location; PUT of the bytes there → 200 and the file; DELETE → 499 (cancelled).
   */
  private upload(record: FakeGoogleRequest, raw: Buffer, res: ServerResponse, json: (s: number, v: unknown) => void): void {
    const uploadId = record.query.upload_id;
    if (record.method === 'POST') {
      if (record.query.uploadType !== 'resumable') return json(400, googleError(400, 'INVALID_ARGUMENT', 'Unsupported upload type'));
      const meta = (record.json ?? {}) as UploadSession['metadata'];
      const missing = this.parentsMissing(meta.parents);
      if (missing) return json(404, this.notFound(missing));
      const id = randomBytes(12).toString('base64url');
      const length = Number(record.headers['x-upload-content-length']);
      this.uploadSessions.set(id, { metadata: meta, contentType: String(record.headers['x-upload-content-type'] ?? meta.mimeType ?? 'application/octet-stream'), length: Number.isFinite(length) ? length : null });
      const fields = record.query.fields ? `&fields=${encodeURIComponent(record.query.fields)}` : '';
      return void res.writeHead(200, { location: `${this.baseUrl}/upload/drive/v3/files?uploadType=resumable&upload_id=${id}${fields}`, 'content-length': '0' }).end();
    }
    const session = uploadId ? this.uploadSessions.get(uploadId) : undefined;
    if (!session) return json(404, googleError(404, 'NOT_FOUND', 'No such upload session.'));
    if (record.method === 'DELETE') {
      this.uploadSessions.delete(uploadId!);
      return void res.writeHead(499, { 'content-length': '0' }).end();
    }
    if (record.method !== 'PUT') return json(405, googleError(405, 'METHOD_NOT_ALLOWED', 'Method not allowed'));
    if (session.length !== null && raw.length !== session.length) return json(400, googleError(400, 'INVALID_ARGUMENT', `Expected ${session.length} bytes, got ${raw.length}`));
    this.uploadSessions.delete(uploadId!);
    const id = this.addDriveFile(session.metadata.name ?? 'Untitled', session.metadata.mimeType ?? session.contentType, raw, session.metadata.parents ?? ['root']);
    json(200, this.driveView(this.drive.get(id)!, record.query.fields));
  }

  /** files.get: metadata, or the bytes with alt=media (a Google-native document: 403 fileNotDownloadable). */
  private getDriveFile(id: string, record: FakeGoogleRequest, res: ServerResponse, json: (s: number, v: unknown) => void): void {
    const file = this.drive.get(id);
    if (!file) return json(404, this.notFound(id));
    if (record.query.alt !== 'media') return json(200, this.driveView(file, record.query.fields));
    if (!file.content) {
      const message = 'Only files with binary content can be downloaded. Use Export with Docs Editors files.';
      return json(403, { error: { code: 403, message, errors: [{ message, domain: 'global', reason: 'fileNotDownloadable', location: 'alt', locationType: 'parameter' }] } });
    }
    res.writeHead(200, { 'content-type': file.mimeType, 'content-length': String(file.content.length) }).end(file.content);
  }

  /** People's page tokens: opaque to callers; a token the fake did not make is 400 INVALID_ARGUMENT. */
  private offset(record: FakeGoogleRequest): number | null {
    if (!record.query.pageToken) return 0;
    const offset = Number(/^people-offset:(\d+)$/.exec(Buffer.from(record.query.pageToken, 'base64url').toString('utf8'))?.[1]);
    return Number.isInteger(offset) ? offset : null;
  }

  private connections(record: FakeGoogleRequest, json: (s: number, v: unknown) => void): void {
    if (!record.query.personFields) return json(400, googleError(400, 'INVALID_ARGUMENT', 'personFields mask is required. Please specify one or more valid paths.'));
    const size = Number(record.query.pageSize ?? 100);
    if (!Number.isInteger(size) || size < 1 || size > 1000) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid pageSize. Page size must be between 1 and 1000.'));
    const offset = this.offset(record);
    if (offset === null) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.'));
    const page = this.people.slice(offset, offset + size);
    json(200, {
      ...(page.length ? { connections: page } : {}),
      ...(offset + size < this.people.length ? { nextPageToken: Buffer.from(`people-offset:${offset + size}`).toString('base64url') } : {}),
      totalPeople: this.people.length, totalItems: this.people.length,
    });
  }

  /** searchContacts: the query as a prefix of a word of a name, email, phone (digits) or organization. */
  private searchContacts(record: FakeGoogleRequest, json: (s: number, v: unknown) => void): void {
    if (!record.query.readMask) return json(400, googleError(400, 'INVALID_ARGUMENT', 'readMask is required. Please specify one or more valid paths.'));
    const size = Number(record.query.pageSize ?? 10);
    if (!Number.isInteger(size) || size < 1 || size > 30) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Page size must be between 0 and 30.'));
    const q = (record.query.query ?? '').toLowerCase().trim();
    if (!q) return json(200, {});
    const digits = q.replace(/[\s()+-]/g, '');
    const hit = (p: GooglePerson) => [
      ...(p.names ?? []).flatMap((n) => `${n.givenName ?? ''} ${n.familyName ?? ''} ${n.displayName ?? ''}`.split(/\s+/)),
      ...(p.emailAddresses ?? []).map((e) => e.value ?? ''),
      ...(p.organizations ?? []).flatMap((o) => (o.name ?? '').split(/\s+/)),
    ].some((w) => w.toLowerCase().startsWith(q)) || (/^\d+$/.test(digits) && (p.phoneNumbers ?? []).some((ph) => (ph.value ?? '').replace(/\D/g, '').startsWith(digits)));
    const results = this.people.filter(hit).slice(0, size);
    json(200, results.length ? { results: results.map((person) => ({ person })) } : {});
  }

  private contactGroups(record: FakeGoogleRequest, json: (s: number, v: unknown) => void): void {
    const size = Number(record.query.pageSize ?? 30);
    if (!Number.isInteger(size) || size < 1 || size > 1000) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid pageSize.'));
    const offset = this.offset(record);
    if (offset === null) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.'));
    const all = [...this.groups].map(([id, name]): GoogleContactGroup => ({
      resourceName: `contactGroups/${id}`, groupType: SYSTEM_GROUPS[id] ? 'SYSTEM_CONTACT_GROUP' : 'USER_CONTACT_GROUP',
      name: SYSTEM_GROUPS[id] ? id : name, formattedName: name,
      memberCount: this.people.filter((p) => p.memberships?.some((m) => m.contactGroupMembership?.contactGroupId === id)).length,
    }));
    json(200, {
      contactGroups: all.slice(offset, offset + size), totalItems: all.length,
      ...(offset + size < all.length ? { nextPageToken: Buffer.from(`people-offset:${offset + size}`).toString('base64url') } : {}),
    });
  }

  private detail(file: FakeSpreadsheet) {
    return {
      spreadsheetId: file.id,
      spreadsheetUrl: `https://docs.google.com/spreadsheets/d/${file.id}/edit`,
      properties: { title: file.title },
      sheets: file.sheets.map((s, index) => ({
        properties: { sheetId: s.sheetId, title: s.title, index, sheetType: 'GRID', gridProperties: { rowCount: Math.max(1000, s.rows.length), columnCount: Math.max(26, ...s.rows.map((r) => r.length)) } },
      })),
    };
  }

  private create(record: FakeGoogleRequest, json: (s: number, v: unknown) => void): void {
    const body = record.json as { properties?: { title?: string }; sheets?: { properties?: { title?: string }; data?: { rowData?: { values?: { userEnteredValue?: { stringValue?: string } }[] }[] }[] }[] } | undefined;
    if (!body?.properties?.title) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid requests[0]: properties.title is required'));
    const id = this.seed(body.properties.title, (body.sheets ?? [{}]).map((s, i) => ({
      title: s.properties?.title ?? `Sheet${i + 1}`,
      rows: (s.data?.[0]?.rowData ?? []).map((r) => (r.values ?? []).map((v) => v.userEnteredValue?.stringValue ?? null)),
    })));
    json(200, this.detail(this.files.get(id)!));
  }

  /** The tab and box a range names (null: no such tab). */
  private target(file: FakeSpreadsheet, text: string): { sheet: FakeSheet; col: number; row: number; endCol: number | null; endRow: number | null } | null {
    let range;
    try {
      range = parseA1(text);
    } catch {
      return null;
    }
    const sheet = range.sheet === null ? file.sheets[0] : file.sheets.find((s) => s.title === range.sheet);
    if (!sheet) return null;
    const c = range.cells;
    return { sheet, col: c?.startColumn ?? 1, row: c?.startRow ?? 1, endCol: c?.endColumn ?? null, endRow: c?.endRow ?? null };
  }

  private read(file: FakeSpreadsheet, t: NonNullable<ReturnType<GoogleFake['target']>>, record: FakeGoogleRequest, json: (s: number, v: unknown) => void): void {
    const option = record.query.valueRenderOption ?? 'FORMATTED_VALUE';
    const lastRow = Math.min(t.endRow ?? t.sheet.rows.length, t.sheet.rows.length);
    const values: Cell[][] = [];
    for (let r = t.row; r <= lastRow; r++) {
      const row = t.sheet.rows[r - 1] ?? [];
      const cells: Cell[] = [];
      for (let c = t.col; c <= Math.min(t.endCol ?? row.length, row.length); c++) {
        const cell = row[c - 1];
        cells.push(cell === undefined ? '' : option === 'FORMULA' && cell.formula ? cell.formula : option === 'UNFORMATTED_VALUE' || cell.value === null ? cell.value ?? '' : formatted(cell.value));
      }
      while (cells.length && cells[cells.length - 1] === '') cells.pop();
      values.push(cells);
    }
    while (values.length && values[values.length - 1]!.length === 0) values.pop();
    const width = values.reduce((w, r) => Math.max(w, r.length), 0);
    const a1 = `'${t.sheet.title}'!${columnLetters(t.col)}${t.row}:${columnLetters(Math.max(t.col, t.col + width - 1))}${Math.max(t.row, t.row + values.length - 1)}`;
    json(200, { range: a1, majorDimension: 'ROWS', ...(values.length ? { values } : {}) });
    void file;
  }

  private write(file: FakeSpreadsheet, t: NonNullable<ReturnType<GoogleFake['target']>>, record: FakeGoogleRequest, append: boolean, json: (s: number, v: unknown) => void): void {
    const input = record.query.valueInputOption;
    if (input !== 'RAW' && input !== 'USER_ENTERED') return json(400, googleError(400, 'INVALID_ARGUMENT', "'valueInputOption' is required but not specified"));
    const values = (record.json as { values?: unknown } | undefined)?.values;
    if (!Array.isArray(values) || !values.every(Array.isArray)) return json(400, googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Invalid values'));
    let row = t.row;
    if (append) {
      // The table: rows with data from the range's first row on; new rows go after it.
      let last = t.row - 1;
      for (let r = t.row; r <= t.sheet.rows.length; r++) if (t.sheet.rows[r - 1]?.some((c) => c !== undefined && c.value !== '')) last = r;
      row = last + 1;
    }
    const width = values.reduce((w: number, r: unknown[]) => Math.max(w, r.length), 0);
    values.forEach((cells: Cell[], i) => {
      const target = (t.sheet.rows[row + i - 1] ??= []);
      for (let n = t.sheet.rows.length; n < row + i - 1; n++) t.sheet.rows[n] ??= [];
      cells.forEach((v, j) => {
        target[t.col + j - 1] = v === null ? undefined : input === 'RAW' ? { value: v } : entered(v);
      });
    });
    file.modifiedTime = new Date().toISOString();
    const updatedRange = `'${t.sheet.title}'!${columnLetters(t.col)}${row}:${columnLetters(t.col + Math.max(width, 1) - 1)}${row + values.length - 1}`;
    const update = { spreadsheetId: file.id, updatedRange, updatedRows: values.length, updatedColumns: width, updatedCells: values.reduce((n: number, r: unknown[]) => n + r.length, 0) };
    json(200, append ? { spreadsheetId: file.id, tableRange: `'${t.sheet.title}'!A1`, updates: update } : update);
  }
}

/** FORMATTED_VALUE: what the cell shows (numbers and booleans as text). */
function formatted(value: Cell): Cell {
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  return value === null ? '' : String(value);
}

/** USER_ENTERED: numbers and TRUE/FALSE typed, `=a+b` of numbers computed as a formula. */
function entered(v: Cell): StoredCell {
  if (typeof v !== 'string') return { value: v };
  if (/^-?\d+(\.\d+)?$/.test(v.trim())) return { value: Number(v) };
  if (/^(true|false)$/i.test(v.trim())) return { value: v.trim().toLowerCase() === 'true' };
  const sum = /^=\s*(-?\d+(?:\.\d+)?)\s*\+\s*(-?\d+(?:\.\d+)?)\s*$/.exec(v);
  if (v.startsWith('=')) return { value: sum ? Number(sum[1]) + Number(sum[2]) : '#NAME?', formula: v };
  return { value: v };
}

export async function startGoogleFake(client?: { clientId: string; clientSecret: string }): Promise<GoogleFake> {
  return new GoogleFake(client).start();
}
