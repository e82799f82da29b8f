import { onlineReplicas } from '../../src/redis/replicas';

/** The master's INFO replication, as Redis 7 writes it: only replicas in state "online" hold writes. */
describe('onlineReplicas: the replicas INFO replication lists as online', () => {
  it('when replicas are listed, then only those in state online count', () => {
    const info = [
      '# Replication', 'role:master', 'connected_slaves:3',
      'slave0:ip=10.0.0.2,port=6379,state=online,offset=1000,lag=0',
      'slave1:ip=10.0.0.3,port=6379,state=wait_bgsave,offset=0,lag=0',
      'slave2:ip=10.0.0.4,port=6379,state=online,offset=990,lag=1',
      'master_replid:0123', 'master_repl_offset:1000',
    ].join('\r\n');
    expect(onlineReplicas(info)).toBe(2);
  });

  it('when no replica is connected, then none counts', () => {
    expect(onlineReplicas('# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_repl_offset:0\r\n')).toBe(0);
  });
});
