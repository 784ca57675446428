import { ApiError, validationFailed } from '#libs/core';
import type { ProviderError, UsableConnection } from '#libs/integrations';
import {
  MAX_SEARCH_RESULTS, PERSON_FIELDS, toContact, toLabel, type ContactLabel, type ContactsPage, type GoogleContactGroup, type GooglePerson,
} from './contacts.js';
import { garbled, googleCall, type GoogleRequest } from './google.js';
import type { SheetsDeps } from './sheets.service.js';

export interface ReadContacts {
  search: string | null;
  limit: number;
  pageToken: string | null;
}

interface ConnectionsAnswer {
  connections?: GooglePerson[];
  nextPageToken?: unknown;
  totalPeople?: unknown;
  totalItems?: unknown;
}

interface GroupsAnswer {
  contactGroups?: GoogleContactGroup[];
  nextPageToken?: unknown;
}

/** contactGroups.list's pageSize cap; an account's labels are walked to the end (there are few). */
const GROUP_PAGE = 1000;
const MAX_GROUP_PAGES = 20;

const token = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/**
 * The contacts rows of workspace-suite (§4.5; docs/suite.md): People v1 `people/me/connections`
 * (a cursor: Google's nextPageToken), `people:searchContacts` for `search` (one page of at most 30,
 * as Google answers it), `contactGroups.list` for the labels.
 */
export class ContactsService {
  constructor(private readonly deps: SheetsDeps) {}

  async read(use: UsableConnection, q: ReadContacts): Promise<ContactsPage> {
    if (q.search && q.pageToken) throw validationFailed({ 'query.pageToken': ['a search answers one page (Google\'s searchContacts has no cursor): drop pageToken or search'] });
    if (q.search) return this.search(use, q.search, q.limit);
    const query = new URLSearchParams({ personFields: PERSON_FIELDS, pageSize: String(q.limit), ...(q.pageToken ? { pageToken: q.pageToken } : {}) });
    const answer = await this.call<ConnectionsAnswer>(use, { api: 'people', path: '/v1/people/me/connections', query, retry: 'all' }, 'query.pageToken');
    if (answer.connections !== undefined && !Array.isArray(answer.connections)) throw garbled('connections that are not a list');
    const contacts = (answer.connections ?? []).flatMap((p) => toContact(p) ?? []);
    const total = typeof answer.totalPeople === 'number' ? answer.totalPeople : typeof answer.totalItems === 'number' ? answer.totalItems : contacts.length;
    return { contacts, nextPageToken: token(answer.nextPageToken), total };
  }

  /**
   * `people:searchContacts`: Google matches the query as a prefix of the words of names, nicknames,
   * email addresses, phone numbers and organizations, answers at most 30 and offers no cursor; so
   * `limit` above 30 reads 30, nextPageToken is null and total counts what came back.
   */
  private async search(use: UsableConnection, search: string, limit: number): Promise<ContactsPage> {
    const query = new URLSearchParams({ query: search, readMask: PERSON_FIELDS, pageSize: String(Math.min(limit, MAX_SEARCH_RESULTS)) });
    const answer = await this.call<{ results?: { person?: GooglePerson }[] }>(use, { api: 'people', path: '/v1/people:searchContacts', query, retry: 'all' }, 'query.search');
    if (answer.results !== undefined && !Array.isArray(answer.results)) throw garbled('search results that are not a list');
    const contacts = (answer.results ?? []).flatMap((r) => (r.person ? toContact(r.person) ?? [] : []));
    return { contacts, nextPageToken: null, total: contacts.length };
  }

  /** Every contact group (label) of the account with its member count, walking Google's pages. */
  async labels(use: UsableConnection): Promise<ContactLabel[]> {
    const labels: ContactLabel[] = [];
    let pageToken: string | null = null;
    for (let page = 0; page < MAX_GROUP_PAGES; page++) {
      const query = new URLSearchParams({ pageSize: String(GROUP_PAGE), groupFields: 'name,groupType,memberCount', ...(pageToken ? { pageToken } : {}) });
      const answer: GroupsAnswer = await this.call<GroupsAnswer>(use, { api: 'people', path: '/v1/contactGroups', query, retry: 'all' }, 'contactGroups');
      if (answer.contactGroups !== undefined && !Array.isArray(answer.contactGroups)) throw garbled('contact groups that are not a list');
      labels.push(...(answer.contactGroups ?? []).flatMap((g) => toLabel(g) ?? []));
      pageToken = token(answer.nextPageToken);
      if (!pageToken) break;
    }
    return labels;
  }

  /** Google refused the request itself: a bad page token or query (400 → 422 naming `field`), else 502. */
  private call<T>(use: UsableConnection, req: GoogleRequest, field: string): Promise<T> {
    return googleCall<T>(this.deps, use, req, (err: ProviderError) =>
      err.status === 400 ? validationFailed({ [field]: [err.message] }, 'The contacts provider refused the request') : new ApiError('PROVIDER_ERROR', err.message));
  }
}
