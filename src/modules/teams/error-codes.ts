// The teams module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const teamErrors = defineErrorCodes({
  team_exists: { status: 409, description: 'A team with this name already exists in the organization' },
  team_not_found: { status: 404, description: 'No such team in the organization' },
});
