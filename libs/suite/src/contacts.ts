/**
 * The Contacts shapes of contract §2 ("Other shapes") and what Google's People v1 Person becomes.
 * Pure: no I/O here (contacts.service.ts calls Google).
 */

/** §2 Contact. */
export interface Contact {
  id: string;
  displayName: string | null;
  firstName: string | null;
  lastName: string | null;
  email: string | null;
  allEmails: string[];
  phone: string | null;
  allPhones: string[];
  organization: string | null;
  jobTitle: string | null;
  city: string | null;
  country: string | null;
  photoUrl: string | null;
  notes: string | null;
  groupIds: string[];
}

/** §2 Contacts response. */
export interface ContactsPage {
  contacts: Contact[];
  nextPageToken: string | null;
  total: number;
}

/** §2 Contact label. */
export interface ContactLabel {
  id: string;
  name: string;
  count: number;
}

/** §8 contacts `limit`: up to 1000 (People's own pageSize cap), 100 by default (People's default). */
export const MAX_CONTACTS_LIMIT = 1000;
export const DEFAULT_CONTACTS_LIMIT = 100;
/** `people:searchContacts` answers one page of at most 30 (its documented pageSize cap) and no cursor. */
export const MAX_SEARCH_RESULTS = 30;

interface FieldMetadata {
  metadata?: { primary?: boolean };
}

/** People v1 Person, the fields `personFields` asks for. */
export interface GooglePerson {
  resourceName?: string;
  names?: (FieldMetadata & { displayName?: string; givenName?: string; familyName?: string })[];
  emailAddresses?: (FieldMetadata & { value?: string })[];
  phoneNumbers?: (FieldMetadata & { value?: string; canonicalForm?: string })[];
  organizations?: (FieldMetadata & { name?: string; title?: string })[];
  addresses?: (FieldMetadata & { city?: string; country?: string; countryCode?: string })[];
  photos?: (FieldMetadata & { url?: string; default?: boolean })[];
  biographies?: (FieldMetadata & { value?: string })[];
  memberships?: { contactGroupMembership?: { contactGroupId?: string; contactGroupResourceName?: string } }[];
}

/** People v1 ContactGroup. */
export interface GoogleContactGroup {
  resourceName?: string;
  name?: string;
  formattedName?: string;
  groupType?: string;
  memberCount?: number;
}

export const PERSON_FIELDS = 'names,emailAddresses,phoneNumbers,organizations,addresses,photos,biographies,memberships';

/** The primary entry of a repeated People field, else its first. */
function primary<T extends FieldMetadata>(list: T[] | undefined): T | undefined {
  return list?.find((e) => e.metadata?.primary) ?? list?.[0];
}

/** The primary first, then the others in Google's order, blanks and repeats left out. */
function values<T extends FieldMetadata>(list: T[] | undefined, value: (e: T) => string | undefined): string[] {
  const first = primary(list);
  const ordered = first ? [first, ...(list ?? []).filter((e) => e !== first)] : [];
  return [...new Set(ordered.map((e) => value(e)?.trim() ?? '').filter(Boolean))];
}

const text = (v: string | undefined): string | null => (v?.trim() ? v.trim() : null);
/** `people/c123` → `c123`; `contactGroups/myContacts` → `myContacts`. */
export const resourceId = (name: string): string => name.slice(name.indexOf('/') + 1);

/**
 * A Person as §2's Contact: the primary name, email, phone, organization and address (else the first);
 * the photo unless it is Google's generated placeholder (`default: true`); the notes (biography);
 * the ids of the contact groups (labels) it belongs to.
 */
export function toContact(p: GooglePerson): Contact | null {
  if (!p.resourceName) return null;
  const name = primary(p.names);
  const emails = values(p.emailAddresses, (e) => e.value);
  const phones = values(p.phoneNumbers, (e) => e.value ?? e.canonicalForm);
  const org = primary(p.organizations);
  const address = primary(p.addresses);
  const photo = primary(p.photos);
  return {
    id: resourceId(p.resourceName),
    displayName: text(name?.displayName) ?? (text([name?.givenName, name?.familyName].filter(Boolean).join(' ')) || emails[0]) ?? null,
    firstName: text(name?.givenName),
    lastName: text(name?.familyName),
    email: emails[0] ?? null,
    allEmails: emails,
    phone: phones[0] ?? null,
    allPhones: phones,
    organization: text(org?.name),
    jobTitle: text(org?.title),
    city: text(address?.city),
    country: text(address?.country) ?? text(address?.countryCode),
    photoUrl: photo?.url && !photo.default ? photo.url : null,
    notes: text(primary(p.biographies)?.value),
    groupIds: [...new Set((p.memberships ?? []).flatMap((m) => {
      const g = m.contactGroupMembership;
      const id = g?.contactGroupId ?? (g?.contactGroupResourceName ? resourceId(g.contactGroupResourceName) : undefined);
      return id ? [id] : [];
    }))],
  };
}

/** A ContactGroup as §2's Contact label (`formattedName`: the system groups' names in the account's language). */
export function toLabel(g: GoogleContactGroup): ContactLabel | null {
  if (!g.resourceName) return null;
  return { id: resourceId(g.resourceName), name: g.formattedName ?? g.name ?? resourceId(g.resourceName), count: g.memberCount ?? 0 };
}
