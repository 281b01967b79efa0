import { typeid } from 'typeid-js';

/** A TypeID: `prefix_` + 26 Crockford base32 characters of a UUIDv7 (time-sortable, globally unique). */
export function newId(prefix: string): string {
  return typeid(prefix).toString();
}

/** Prefixes in use, so that each kind of id says what it is. */
export const idPrefixes = {
  user: 'usr',
  session: 'ses',
  organization: 'org',
  member: 'mem',
  team: 'team',
  invitation: 'inv',
  apiKey: 'key',
  role: 'role',
} as const;
