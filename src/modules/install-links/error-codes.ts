// The install links module's error codes.
import { defineErrorCodes } from '../../http/error-catalog.ts';

export const installLinkErrors = defineErrorCodes({
  install_link_not_found: { status: 404, description: 'Unknown install-link token, or the link was rotated away' },
});
