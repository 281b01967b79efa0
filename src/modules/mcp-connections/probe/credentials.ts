// The credentials a probe sends: which values can go into an HTTP header at all, and the one
// redactor that every text leaving the probe (diagnostic, log line, tool names) passes through.
// A remote server sees the credential and may echo it back (in a JSON-RPC error, an HTTP error
// body the SDK quotes, a protocolVersion, a tool name); errors may quote it too. A credential is
// write-only, so none of that may reach a response or the log.

/**
 * What an API key (or bearer token) may contain: printable ASCII, U+0020 to U+007E, neither starting
 * nor ending with a space. fetch throws on CR, LF and NUL (quoting the whole value in its error) and
 * on characters beyond U+00FF, and silently trims outer spaces, so the key sent would not be the key
 * stored. Tabs and U+0080 to U+00FF, which fetch would send, are refused too: they are no credential
 * a server issues, and each server would read such bytes its own way. The empty string passes here;
 * length limits say that. (Literal ranges, `!`..`~` and space..`~`, read the same in the OpenAPI document.)
 */
export const HEADER_VALUE_PATTERN = /^(?:[!-~](?:[ -~]*[!-~])?)?$/;

export const HEADER_VALUE_RULE = 'printable ASCII characters (U+0020 to U+007E), with no leading or trailing space';

export function isHeaderValue(value: string): boolean {
  return HEADER_VALUE_PATTERN.test(value);
}

export const REDACTED = '[redacted]';

export type Redactor = (text: string) => string;

/**
 * Replaces every credential the probe sent in a text. Besides the value as sent, the forms in which
 * it comes back quoted: JSON-escaped (an error body the SDK puts in its message verbatim) and
 * percent-encoded (a URL). One pass with the longest forms first: a credential inside another is
 * not half-replaced, and a replacement is never scanned again.
 */
export function credentialRedactor(credentials: ReadonlyArray<string | undefined>): Redactor {
  const forms = new Set<string>();
  for (const credential of credentials) {
    if (!credential) continue;
    forms.add(credential);
    forms.add(JSON.stringify(credential).slice(1, -1));
    forms.add(encodeURIComponent(credential));
  }
  const ordered = [...forms].filter((form) => form.length > 0).sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return (text) => text;
  const pattern = new RegExp(ordered.map((form) => form.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')).join('|'), 'g');
  return (text) => text.replace(pattern, REDACTED);
}
