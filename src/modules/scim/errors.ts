// SCIM errors (RFC 7644 3.12): their own body shape, with `status` as a string.
export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

export class ScimError extends Error {
  readonly status: number;
  readonly scimType: ScimType | undefined;
  constructor(status: number, detail: string, scimType?: ScimType) {
    super(detail);
    this.name = 'ScimError';
    this.status = status;
    this.scimType = scimType;
  }
}

export interface ScimErrorBody {
  schemas: [typeof SCIM_ERROR_SCHEMA];
  status: string;
  scimType?: ScimType;
  detail?: string;
}

export function scimErrorBody(status: number, detail?: string, scimType?: ScimType): ScimErrorBody {
  const body: ScimErrorBody = { schemas: [SCIM_ERROR_SCHEMA], status: String(status) };
  if (scimType) body.scimType = scimType;
  if (detail) body.detail = detail;
  return body;
}
