// What a refused sign-in is (the person sees its message; the connection's health and the audit log
// its category), how a failure to reach the IdP is told from a refusal, and how a failure is recorded.
import type { Database } from '../../db/database.ts';
import { OutboundBlockedError, OutboundResponseTooLargeError, OutboundTimeoutError } from '../../platform/outbound.ts';
import { writeTransaction, type WriteContext } from '../../platform/write-context.ts';
import type { SignInStore } from './sign-in-store.ts';
import type { SsoConnectionRow } from './store.ts';

/** A refusal the person sees: a category for the connection's health and a message (never a token). */
export class SignInRefused extends Error {
  readonly category: string;
  readonly status: number;
  /** The account the refusal concerns, when one was found (the failure's audit event names them). */
  readonly userId: string | undefined;
  constructor(status: number, category: string, message: string, userId?: string) {
    super(message);
    this.category = category;
    this.status = status;
    this.userId = userId;
  }
}

/** Whether a failed code exchange failed to reach the IdP (network, timeout, the outbound guard, its 5xx) rather than a check. */
export function unreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (
      cause instanceof OutboundTimeoutError ||
      cause instanceof OutboundBlockedError ||
      cause instanceof OutboundResponseTooLargeError
    )
      return true;
    if (
      cause.name === 'TimeoutError' ||
      cause.name === 'AbortError' ||
      (cause instanceof TypeError && /fetch failed/i.test(cause.message))
    )
      return true;
    const code = (cause as Error & { code?: unknown }).code;
    if (typeof code === 'string' && /^(ECONN|ENOTFOUND|EAI_|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|UND_ERR)/.test(code))
      return true;
    const status = (cause as Error & { status?: unknown }).status;
    if (typeof status === 'number' && status >= 500) return true;
  }
  return false;
}

/** The innermost message of an error chain, for the connection's health (never a token: these are network errors). */
export function describeCause(error: unknown): string {
  let message = 'unknown error';
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++)
    message = cause.message || message;
  return message;
}

/** Refusals of the person (the organization's rules), recorded as `denied`; the others (the IdP's answer, its configuration) as `failure`. */
const personRefusals = new Set([
  'email_not_verified',
  'email_outside_domain',
  'not_a_member',
  'account_not_linkable',
  'member_suspended',
  'member_removed',
  'subject_conflict',
  'member_inactive',
  'code_verifier_mismatch',
  'reauthentication_session_mismatch',
  'browser_mismatch',
]);

export const otherBrowser =
  'This sign-in was started in another browser. Finish it in the browser that started it, or start the sign-in again from this one.';
export const unknownLink = 'This sign-in link has expired or was already used. Start the sign-in again.';

/** Records a refused or failed sign-in of the connection's organization (see recordFailure). */
export type FailureRecorder = ReturnType<typeof createFailureRecorder>;

export function createFailureRecorder(db: Database, store: SignInStore) {
  /**
   * A refused or failed sign-in, recorded in a transaction of its own (the sign-in fails, the record
   * stays): an `sso.sign_in_failed` event in the connection's organization with the reason's category,
   * and, for what the connection's health should show (`health`), its last error. Never a token: the
   * messages are orgplane's own or name the check that failed.
   */
  async function recordFailure(
    context: Omit<WriteContext, 'actor'>,
    connection: Pick<SsoConnectionRow, 'organization_id' | 'id'> &
      Partial<Pick<SsoConnectionRow, 'domain' | 'protocol'>>,
    category: string,
    message: string,
    detail: { email?: string | undefined; userId?: string | undefined; health?: boolean } = {},
  ): Promise<void> {
    await writeTransaction(db, { ...context, actor: { kind: 'anonymous' } }, async (tx) => {
      if (detail.health !== false)
        await store.recordError(tx, connection.organization_id, connection.id, category, message);
      tx.audit({
        action: 'sso.sign_in_failed',
        outcome: personRefusals.has(category) ? 'denied' : 'failure',
        organizationId: connection.organization_id,
        target: { type: 'sso_connection', id: connection.id, name: connection.domain ?? null },
        changes: {
          method: 'sso',
          ...(connection.protocol ? { protocol: connection.protocol } : {}),
          reason: category,
          message: message.slice(0, 500),
          ...(detail.email ? { email: detail.email } : {}),
        },
        ...(detail.userId ? { actorUserId: detail.userId } : {}),
      });
    });
  }
  return recordFailure;
}
