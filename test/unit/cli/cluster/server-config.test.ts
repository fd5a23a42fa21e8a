// A Temporal node's config as the server reads it: both stores on the postgres12 plugin, every service bound to
// and announcing the node's own address on its nine ports, the cluster's address the same on every node.
import { expect } from 'chai';
import YAML from 'yaml';
import { dynamicConfigYaml, nodeConfigYaml, nodePorts } from '../../../../src/cli/cluster/server-config';

describe('Temporal node config', () => {
  const sql = { host: '127.0.0.1', port: 5432, user: 'tarmac', password: 'p: "#x' };
  const configOf = (host: string) =>
    YAML.parse(
      nodeConfigYaml({
        host,
        ports: nodePorts(7233),
        sql,
        numHistoryShards: 4,
        clusterAddress: '127.0.0.10:7233',
        dynamicConfigFile: '/n/config/dynamic.yaml',
      }),
    );

  it('puts both stores on PostgreSQL and binds every service to the node on ports of its own', () => {
    const config = configOf('127.0.0.11');
    const { datastores } = config.persistence;
    expect(config.persistence).to.include({ numHistoryShards: 4, defaultStore: 'postgres-default' });
    expect(datastores['postgres-default'].sql).to.include({ pluginName: 'postgres12', databaseName: 'temporal' });
    expect(datastores['postgres-visibility'].sql).to.include({ databaseName: 'temporal_visibility' });
    expect(datastores['postgres-default'].sql.password, 'a password YAML would misread').to.equal(sql.password);
    expect(config.global.membership.broadcastAddress).to.equal('127.0.0.11');
    const services = Object.values(config.services) as { rpc: Record<string, unknown> }[];
    expect(services).to.have.length(4);
    expect(services.every((s) => s.rpc.bindOnIP === '127.0.0.11')).to.equal(true);
    const ports = services.flatMap((s) => [s.rpc.grpcPort, s.rpc.membershipPort, s.rpc.httpPort].filter(Boolean));
    expect(new Set(ports).size).to.equal(9);
    expect(Math.min(...(ports as number[]))).to.equal(7233);
    expect(config.dynamicConfigClient.filepath).to.equal('/n/config/dynamic.yaml');
  });

  it('refuses ports past what the membership table holds (SMALLINT)', () => {
    expect(nodePorts(32_759).workerMembership).to.equal(32_767);
    expect(() => nodePorts(32_760)).to.throw(/at most 32767/);
  });

  it('gives every node the same cluster address, and a dynamic config the server can read', () => {
    const address = (host: string) => configOf(host).clusterMetadata.clusterInformation.active.rpcAddress;
    expect(address('127.0.0.10')).to.equal(address('127.0.0.11'));
    expect(YAML.parse(dynamicConfigYaml())['history.hostLevelCacheMaxSize']).to.deep.equal([{ value: 8192 }]);
  });
});
