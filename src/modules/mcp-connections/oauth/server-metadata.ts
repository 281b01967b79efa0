// The authorization server's metadata as the flows read it (RFC 8414), with the field the MCP SDK's type
// leaves out. In its own file because discovery.ts and legacy-discovery.ts both name it, and discovery.ts
// calls legacy-discovery.ts (the older path): the type cannot live in either without an import circle.
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';

export type AuthorizationServerMetadata = OAuthMetadata & {
  authorization_response_iss_parameter_supported?: boolean;
};
