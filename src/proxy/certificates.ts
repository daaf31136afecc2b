// Which domains a provided (not public CA) certificate already covers: enableSSL then sets certProvided
// instead of publicCaCertificate. The certificate inventory arrives with the jobs (issue 7), which will
// answer this from it; until then no provided certificate exists.
import type { Database } from "../shared/db";

export type ProvidedCertificateLookup = (db: Database, domainNames: string[]) => Promise<ReadonlySet<string>>;

export const domainsWithProvidedCertificate: ProvidedCertificateLookup = async () => new Set<string>();
