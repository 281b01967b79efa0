// The console's only way to the API: openapi-fetch typed by the client generated from the served
// OpenAPI document (clients/typescript/openapi.d.ts), so an API change that breaks a page fails
// `npm run typecheck`.
import createClient from 'openapi-fetch';
import type { components, paths } from '../../clients/typescript/openapi.d.ts';

export type ApiError = components['schemas']['Error'];
export type { components, paths };
export type Member = components['schemas']['Member'];

// The session token lives in sessionStorage: it survives a reload of the tab but not the tab's closing,
// is never sent by the browser on its own (no cookie, so no CSRF), and never appears in a URL. The CSP
// forbids every script but the console's own, which is what keeps it from other scripts.
const tokenKey = 'orgplane.session';
export const session = {
  get token(): string | null {
    return sessionStorage.getItem(tokenKey);
  },
  set(token: string) {
    sessionStorage.setItem(tokenKey, token);
  },
  clear() {
    sessionStorage.removeItem(tokenKey);
  },
};

export const api = createClient<paths>({ baseUrl: location.origin });
api.use({
  onRequest({ request }) {
    const token = session.token;
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
});

/** The message of an error answer, for a person; `details` are shown beside their fields by the forms. */
export function errorMessage(error: ApiError | undefined): string {
  if (!error) return 'Something went wrong.';
  return error.message ?? error.error;
}

/** The API's messages for one field, named by `details[].path`. */
export function fieldErrors(error: ApiError | undefined, field: string): string[] {
  return (error?.details ?? []).filter((detail) => detail.path.join('.') === field).map((detail) => detail.message);
}
