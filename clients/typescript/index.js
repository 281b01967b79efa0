// The orgplane client: openapi-fetch over the types generated from orgplane's OpenAPI document.
import createClient from 'openapi-fetch';

/** A client for the orgplane server at `baseUrl`, sending the given session token or API key. */
export function createOrgplaneClient({ token, apiKey, headers, ...options } = {}) {
  const sent = new Headers(headers);
  if (token !== undefined) sent.set('authorization', `Bearer ${token}`);
  if (apiKey !== undefined) sent.set('x-api-key', apiKey);
  return createClient({ ...options, headers: sent });
}
