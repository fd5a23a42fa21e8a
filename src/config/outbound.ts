// The exceptions to the outbound address policy (src/security/outbound-policy.ts): what the platform may
// connect to on a tenant's behalf although the policy refuses it.
import type { OutboundAllow } from '../security/outbound-policy';
import type { EnvReader } from './env';

export interface OutboundSettings {
  /** OUTBOUND_ALLOW, with DATA_CONNECTOR_ALLOW_CIDRS and DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS as aliases. */
  outbound: OutboundAllow;
}

/** DATA_CONNECTOR_ALLOW_CIDRS and DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS (every range) are older names. */
export function readOutbound(env: EnvReader): OutboundSettings {
  const allow = env.outboundAllow('OUTBOUND_ALLOW');
  const cidrs = [...allow.cidrs, ...env.cidrs('DATA_CONNECTOR_ALLOW_CIDRS')];
  if (env.bool('DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS', false)) cidrs.push('0.0.0.0/0', '::/0');
  return { outbound: { cidrs, hostPorts: allow.hostPorts } };
}
