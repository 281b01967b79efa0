import type { Client, ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './openapi.js';

export type { components, operations, paths };

/** A client whose every method takes a path of the API and is typed by it. */
export type OrgplaneClient = Client<paths>;

export interface OrgplaneClientOptions extends ClientOptions {
  /** The server's base URL, e.g. `https://orgplane.example.com`. */
  baseUrl?: string;
  /** A session token (`ops_...`), sent as `Authorization: Bearer`. */
  token?: string;
  /** An organization API key (`opk_...`), sent as `x-api-key` (only listing members and teams accept one). */
  apiKey?: string;
}

/** A client for the orgplane server at `baseUrl`, sending the given session token or API key. */
export declare function createOrgplaneClient(options?: OrgplaneClientOptions): OrgplaneClient;

/** The `error` codes an operation answers with a status: `ErrorCode<'editMcpConnection', 409>`. */
export type ErrorCode<Operation extends keyof operations, Status extends number> = operations[Operation]['responses'] extends infer Responses
  ? Status extends keyof Responses
    ? Responses[Status] extends { content: { 'application/json': { error: infer Code } } }
      ? Code
      : never
    : never
  : never;
