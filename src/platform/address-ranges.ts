// How people name the ranges ipaddr.js names in camelCase, for messages (the range field keeps its name).
const rangeLabels: Record<string, string> = {
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'carrier-grade NAT',
  ipv4Mapped: 'IPv4-mapped',
  rfc6145: 'IPv4-translated (RFC 6145)',
  rfc6052: 'NAT64 (RFC 6052)',
  '6to4': '6to4',
  teredo: 'Teredo',
  as112: 'AS112',
  amt: 'AMT',
  orchid2: 'ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'drone remote ID',
};

/** A range name as a person reads it: "link-local", not "linkLocal". */
export function rangeLabel(range: string): string {
  return rangeLabels[range] ?? range.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}
