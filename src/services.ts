/**
 * The dependency bag now lives beside the domain (src/domain/services.ts), so
 * domain and access may name it. The edges still import it from here until
 * their own moves rewrite those lines.
 */
export type { ClusterStatus, Services } from './domain/services';
