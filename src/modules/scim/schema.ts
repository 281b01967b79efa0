// The SCIM schemas this server speaks (RFC 7643 section 4 and 8.7), written once and used for
// three things: the /Schemas discovery document, canonical attribute names (SCIM names are
// case-insensitive, so "USERNAME" must land on "userName"), and knowing which attributes are
// booleans (Entra ID sends "True"/"False" strings), multi-valued or read-only.

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_USER_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const LIST_RESPONSE_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_OP_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export type AttributeType =
  | 'string'
  | 'boolean'
  | 'decimal'
  | 'integer'
  | 'dateTime'
  | 'reference'
  | 'complex'
  | 'binary';

export interface AttributeDef {
  name: string;
  type: AttributeType;
  multiValued: boolean;
  required: boolean;
  caseExact: boolean;
  mutability: 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
  returned: 'always' | 'never' | 'default' | 'request';
  uniqueness: 'none' | 'server' | 'global';
  subAttributes?: AttributeDef[];
  referenceTypes?: string[];
  description?: string;
}

export interface SchemaDef {
  id: string;
  name: string;
  description: string;
  attributes: AttributeDef[];
}

type Options = Partial<Omit<AttributeDef, 'name' | 'type'>>;

function a(name: string, type: AttributeType, options: Options = {}): AttributeDef {
  return {
    name,
    type,
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...options,
  };
}

// The common "multi-valued attribute with value/display/type/primary" shape of RFC 7643 2.4.
function valueList(name: string, extra: AttributeDef[] = []): AttributeDef {
  return a(name, 'complex', {
    multiValued: true,
    subAttributes: [
      a('value', 'string'),
      a('display', 'string'),
      a('type', 'string'),
      a('primary', 'boolean'),
      ...extra,
    ],
  });
}

export const userSchema: SchemaDef = {
  id: USER_SCHEMA,
  name: 'User',
  description: 'User Account',
  attributes: [
    a('userName', 'string', { required: true, uniqueness: 'server' }),
    a('name', 'complex', {
      subAttributes: [
        a('formatted', 'string'),
        a('familyName', 'string'),
        a('givenName', 'string'),
        a('middleName', 'string'),
        a('honorificPrefix', 'string'),
        a('honorificSuffix', 'string'),
      ],
    }),
    a('displayName', 'string'),
    a('nickName', 'string'),
    a('profileUrl', 'reference', { referenceTypes: ['external'] }),
    a('title', 'string'),
    a('userType', 'string'),
    a('preferredLanguage', 'string'),
    a('locale', 'string'),
    a('timezone', 'string'),
    a('active', 'boolean'),
    a('password', 'string', { mutability: 'writeOnly', returned: 'never' }),
    valueList('emails'),
    valueList('phoneNumbers'),
    valueList('ims'),
    valueList('photos'),
    a('addresses', 'complex', {
      multiValued: true,
      subAttributes: [
        a('formatted', 'string'),
        a('streetAddress', 'string'),
        a('locality', 'string'),
        a('region', 'string'),
        a('postalCode', 'string'),
        a('country', 'string'),
        a('type', 'string'),
        a('primary', 'boolean'),
      ],
    }),
    a('groups', 'complex', {
      multiValued: true,
      mutability: 'readOnly',
      subAttributes: [
        a('value', 'string', { mutability: 'readOnly' }),
        a('$ref', 'reference', { mutability: 'readOnly', referenceTypes: ['Group'] }),
        a('display', 'string', { mutability: 'readOnly' }),
        a('type', 'string', { mutability: 'readOnly' }),
      ],
    }),
    valueList('entitlements'),
    valueList('roles'),
    valueList('x509Certificates'),
  ],
};

export const enterpriseUserSchema: SchemaDef = {
  id: ENTERPRISE_USER_SCHEMA,
  name: 'EnterpriseUser',
  description: 'Enterprise User',
  attributes: [
    a('employeeNumber', 'string'),
    a('costCenter', 'string'),
    a('organization', 'string'),
    a('division', 'string'),
    a('department', 'string'),
    a('manager', 'complex', {
      subAttributes: [
        a('value', 'string'),
        a('$ref', 'reference', { referenceTypes: ['User'] }),
        a('displayName', 'string', { mutability: 'readOnly' }),
      ],
    }),
  ],
};

export const groupSchema: SchemaDef = {
  id: GROUP_SCHEMA,
  name: 'Group',
  description: 'Group',
  attributes: [
    a('displayName', 'string', { required: true }),
    a('members', 'complex', {
      multiValued: true,
      subAttributes: [
        a('value', 'string', { mutability: 'immutable' }),
        // Members are users only: a group is refused as a member (see the service's memberIds).
        a('$ref', 'reference', { mutability: 'immutable', referenceTypes: ['User'] }),
        a('display', 'string'),
        a('type', 'string', { mutability: 'immutable' }),
      ],
    }),
  ],
};

// Attributes every resource has (RFC 7643 3.1); not listed in the schemas' attribute lists.
const commonAttributes: AttributeDef[] = [
  a('id', 'string', { mutability: 'readOnly', returned: 'always', caseExact: true, uniqueness: 'server' }),
  a('externalId', 'string', { caseExact: true }),
  a('meta', 'complex', { mutability: 'readOnly' }),
  a('schemas', 'reference', { multiValued: true, mutability: 'readOnly' }),
];

export type ResourceKind = 'User' | 'Group';

export interface ResourceSchemas {
  core: SchemaDef;
  extensions: SchemaDef[];
}

export const resourceSchemas: Record<ResourceKind, ResourceSchemas> = {
  User: { core: userSchema, extensions: [enterpriseUserSchema] },
  Group: { core: groupSchema, extensions: [] },
};

/** Finds an attribute by name, case-insensitively, in a list of definitions. */
export function findAttribute(list: readonly AttributeDef[] | undefined, name: string): AttributeDef | undefined {
  if (!list) return undefined;
  const lower = name.toLowerCase();
  return list.find((attr) => attr.name.toLowerCase() === lower);
}

/** The core schema's attributes plus the common ones, for a resource kind. */
export function coreAttributes(kind: ResourceKind): AttributeDef[] {
  return [...commonAttributes, ...resourceSchemas[kind].core.attributes];
}

/** The schema (core or extension) a URN names, case-insensitively. */
export function findSchema(kind: ResourceKind, urn: string): SchemaDef | undefined {
  const lower = urn.toLowerCase();
  const { core, extensions } = resourceSchemas[kind];
  return [core, ...extensions].find((schema) => schema.id.toLowerCase() === lower);
}
