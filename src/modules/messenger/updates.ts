// What orgplane reads from a platform update: its chat (for ordering and for replies). Everything
// else is passed through to the delivery URL untouched.

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// A string id is taken only if printable ASCII: it becomes a column value and a queue key, and
// PostgreSQL's text refuses NUL (which would fail the whole claim batch). The platform's ids are numbers.
const printableId = /^[\x21-\x7e]{1,64}$/;

function idOf(value: unknown): string | null {
  if (!isObject(value)) return null;
  const id = value.id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) return String(id);
  if (typeof id === 'string' && printableId.test(id)) return id;
  return null;
}

/**
 * The chat an update belongs to: `chat` of the update's object (message, edited_message,
 * channel_post, my_chat_member, chat_join_request, message_reaction, ...) or of the message a
 * callback query is attached to. Null for updates with no chat (inline queries, polls...).
 */
export function chatIdOf(update: Json): string | null {
  for (const [field, value] of Object.entries(update)) {
    if (field === 'update_id' || !isObject(value)) continue;
    const chat = idOf(value.chat) ?? (isObject(value.message) ? idOf(value.message.chat) : null);
    if (chat) return chat;
  }
  return null;
}

/** The sender of a chat-less update (inline query, shipping query...), for ordering. */
function senderIdOf(update: Json): string | null {
  for (const [field, value] of Object.entries(update)) {
    if (field === 'update_id' || !isObject(value)) continue;
    const sender = idOf(value.from) ?? idOf(value.user);
    if (sender) return sender;
  }
  return null;
}

/**
 * Updates with the same key are processed one at a time, in order: one chat's updates; a sender's
 * chat-less updates; and, failing both, all chat-less updates of the connection. Within a connection.
 */
export function orderKeyOf(update: Json, chatId: string | null): string {
  if (chatId) return `chat:${chatId}`;
  const sender = senderIdOf(update);
  return sender ? `user:${sender}` : 'none';
}

/** `chat_id` as the Bot API wants it: a number for numeric ids, else the string (`@channel`). */
export function chatIdParam(chatId: string): number | string {
  return /^-?\d+$/.test(chatId) && Number.isSafeInteger(Number(chatId)) ? Number(chatId) : chatId;
}
