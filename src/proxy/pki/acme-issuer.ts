// The ACME issuer backed by D1: its account lives in acme_accounts, and the HTTP-01 challenges it answers in
// acme_challenges (read back by findChallenge for /.well-known/acme-challenge/).
import { eq, inArray } from "drizzle-orm";
import type { Database } from "../../shared/db";
import { fetchWithin } from "../../shared/http/bounded-fetch";
import type { ProxySettings } from "../settings";
import { AcmeClient, AcmeError, CA_UNREACHABLE, generateAccountKey } from "./acme-client";
import type { CertificateIssuer } from "./maintenance";
import { acmeAccounts, acmeChallenges } from "./tables";

/** An ACME issuer whose account lives in acme_accounts and whose challenges are answered from acme_challenges. */
export function acmeIssuer(
  db: Database,
  settings: Pick<ProxySettings, "ACME_DIRECTORY_URL" | "ACME_EMAIL" | "ACME_REQUEST_TIMEOUT">,
): CertificateIssuer {
  const dependencies = {
    fetch: caFetch(settings.ACME_REQUEST_TIMEOUT),
    sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    challenges: {
      async put(challenge: { token: string; keyAuthorization: string; domainName: string }) {
        await db
          .insert(acmeChallenges)
          .values({ ...challenge, createdAt: new Date() })
          .onConflictDoUpdate({
            target: acmeChallenges.token,
            set: { keyAuthorization: challenge.keyAuthorization, domainName: challenge.domainName },
          });
      },
      async remove(tokens: string[]) {
        await db.delete(acmeChallenges).where(inArray(acmeChallenges.token, tokens));
      },
    },
  };
  const directoryUrl = settings.ACME_DIRECTORY_URL;
  const client = new AcmeClient(directoryUrl, dependencies);
  return {
    async prepare() {
      const [stored] = await db.select().from(acmeAccounts).where(eq(acmeAccounts.directoryUrl, directoryUrl)).limit(1);
      const privateJwk = stored?.privateJwk ?? (await generateAccountKey());
      // newAccount with a known key answers the existing account (RFC 8555 7.3), so asking once per run also finds
      // the account again after the CA lost it (a test CA restarted) instead of failing every order.
      const accountUrl = await client.ensureAccount({ privateJwk }, settings.ACME_EMAIL);
      if (!stored || stored.accountUrl !== accountUrl) {
        const values = { directoryUrl, email: settings.ACME_EMAIL ?? null, privateJwk, accountUrl };
        await db
          .insert(acmeAccounts)
          .values(values)
          .onConflictDoUpdate({ target: acmeAccounts.directoryUrl, set: { accountUrl, email: values.email } });
      }
    },
    // Before prepare() the client has no account, and refuses to order.
    obtain: (domainName, replaces) => client.obtainCertificate(domainName, replaces),
    renewalInfo: (certificateId) => client.renewalInfo(certificateId),
  };
}

/**
 * fetch for one run's requests to the CA. Each exchange, its body included, ends within `timeoutMs`. A CA that gives
 * no answer (a time-out, a refused connection) is the CA's failure, told in the attempt's warning like its answers;
 * the run's later requests then fail at once, so that a hung CA costs a run one time-out, not one per request (up to
 * ACME_RENEWAL_INFO_PER_RUN questions and ACME_ORDERS_PER_RUN orders).
 */
function caFetch(timeoutMs: number) {
  let unreachable: string | undefined;
  return async (url: string, init?: RequestInit): Promise<Response> => {
    if (unreachable) throw new AcmeError(`${url} not asked: ${unreachable}`, CA_UNREACHABLE);
    // The signal ends the body's read too (in acme-client.ts, which bounds its size).
    return await fetchWithin(fetch, url, init ?? {}, timeoutMs, (failure) => {
      const cause = failure.timedOut
        ? `did not answer within ${timeoutMs / 1000} s (ACME_REQUEST_TIMEOUT)`
        : `could not be reached: ${failure.detail}`;
      unreachable = `the CA at ${url} ${cause} earlier in this run`;
      return new AcmeError(`${url} ${cause}`, CA_UNREACHABLE);
    });
  };
}

/** The key authorization for a pending HTTP-01 challenge, or undefined. */
export async function findChallenge(db: Database, token: string): Promise<string | undefined> {
  const [row] = await db
    .select({ keyAuthorization: acmeChallenges.keyAuthorization })
    .from(acmeChallenges)
    .where(eq(acmeChallenges.token, token))
    .limit(1);
  return row?.keyAuthorization;
}
