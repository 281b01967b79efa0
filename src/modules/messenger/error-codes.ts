// The messenger module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const messengerErrors = defineErrorCodes({
  connection_not_found: { status: 404, description: 'No such bot connection in the organization' },
  connection_conflict: { status: 409, description: 'The bot is connected in this organization already' },
  bot_already_connected: {
    status: 409,
    description: 'The bot is connected in another organization (a bot has a single webhook)',
  },
  invalid_bot_token: { status: 400, description: 'The messaging platform did not accept the bot token' },
  platform_error: { status: 502, description: 'The messaging platform refused the request' },
  platform_unavailable: { status: 502, description: 'The messaging platform could not be reached' },
});
