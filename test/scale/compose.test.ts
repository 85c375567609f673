import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config';

/**
 * docker-compose.yml runs two Trellis instances behind Caddy on shared
 * Postgres, Redis and MinIO. No Docker engine runs here; `.ci/run` also runs
 * `docker-compose config -q` when the command exists. This reads the file as
 * YAML (merge keys resolved, as Compose does) and checks what the deployment
 * depends on.
 */
type Service = { image?: string; build?: string; ports?: string[]; environment?: Record<string, string>; volumes?: string[]; depends_on?: Record<string, unknown> };

async function compose(): Promise<{ services: Record<string, Service>; volumes: Record<string, unknown> }> {
  return parse(await fs.readFile('docker-compose.yml', 'utf8'), { merge: true });
}

describe('docker-compose.yml', () => {
  it('runs two Trellis instances on one Postgres, Redis and S3 bucket', async () => {
    const { services } = await compose();
    const instances = Object.entries(services).filter(([, s]) => s.build === '.');
    expect(instances.map(([name]) => name).sort()).toEqual(['trellis-a', 'trellis-b']);
    const [a, b] = instances.map(([, s]) => s.environment!);
    expect(a).toEqual(b);
    expect(a!.DATABASE_URL).toMatch(/@postgres:5432\//);
    expect(a!.REDIS_URL).toBe('redis://redis:6379');
    expect(a!.S3_ENDPOINT).toBe('http://minio:9000');
    for (const [, instance] of instances) {
      // Neither is published: the proxy is the way in.
      expect(instance.ports ?? []).toEqual([]);
      expect(instance.volumes).toContain('trellis-data:/data');
      expect(Object.keys(instance.depends_on!)).toEqual(expect.arrayContaining(['postgres', 'redis', 'minio-init']));
    }
    expect(services.postgres!.image).toMatch(/^postgres:/);
    expect(services.redis!.image).toMatch(/^redis:/);
    expect(services.minio!.image).toMatch(/^minio\/minio/);
  });

  it('gives each instance an environment the server accepts (defaults filled in)', async () => {
    const { services } = await compose();
    const env = Object.fromEntries(
      Object.entries(services['trellis-a']!.environment!).map(([key, value]) => [key, String(value).replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]),
    );
    const config = loadConfig(env);
    expect(config.redisUrl).toBe('redis://redis:6379');
    expect(config.s3?.bucket).toBe('trellis');
    expect(config.metricsToken).toBeUndefined();
  });

  it('puts Caddy in front of both, passing websockets and streams', async () => {
    const { services } = await compose();
    const proxy = services.proxy!;
    expect(proxy.image).toMatch(/^caddy:/);
    expect(proxy.ports).toEqual(['${TRELLIS_PORT:-3000}:80']);
    const mount = proxy.volumes!.find((v) => v.endsWith(':/etc/caddy/Caddyfile:ro'))!;
    const caddyfile = await fs.readFile(mount.split(':')[0]!, 'utf8');
    // reverse_proxy upgrades websockets by itself; SSE needs flushing at once.
    expect(caddyfile).toMatch(/reverse_proxy trellis-a:3000 trellis-b:3000/);
    expect(caddyfile).toMatch(/flush_interval -1/);
    expect(caddyfile).toMatch(/health_uri \/api\/health/);
  });
});
