// The crt-list of the https bind: each shipped certificate with the host names it is offered for. HAProxy then
// presents a certificate only for the domains the selection gave it, never for the other names it covers: a wildcard
// certificate provided for one project answers neither another project's name under it nor a name nobody holds
// (those get the fallback certificate, the bind's first and default one). Pure: it takes the selection.
import type { CertificateRow } from "../pki/rows";
import { certificateFile } from "../pki/selection";
import { HOST_NAME, InvalidConfiguration } from "./backend-sections";

/** The longest crt-list line HAProxy 2.6 reads (its buffer is 65536 bytes, newline and NUL included). */
const HAPROXY_LINE_CHARACTERS = 65_534;
/**
 * Host names and characters per line, well under HAProxy's limits (that line length, and 2048 words): a certificate
 * serving more names takes several lines (HAProxy loads a file once however many lines name it).
 */
export const CRT_LIST_NAMES_PER_LINE = 100;
const LINE_CHARACTERS = 32_000;

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The lines `<certificate file> <host name>...`, by file then name: every domain with its exact name as an SNI filter
 * (a domain is a host name, never a wildcard, so no filter ever matches more than the one domain).
 */
export function crtListLines(certificateOf: ReadonlyMap<string, CertificateRow>): string[] {
  const namesOf = new Map<string, string[]>();
  for (const [domainName, row] of certificateOf) {
    const file = certificateFile(row);
    const names = namesOf.get(file);
    if (names) names.push(domainName);
    else namesOf.set(file, [domainName]);
  }
  const lines: string[] = [];
  for (const file of [...namesOf.keys()].sort(byText)) {
    let line = [file];
    let length = file.length;
    for (const name of namesOf.get(file)!.sort(byText)) {
      if (line.length > CRT_LIST_NAMES_PER_LINE || (line.length > 1 && length + 1 + name.length > LINE_CHARACTERS)) {
        lines.push(line.join(" "));
        line = [file];
        length = file.length;
      }
      line.push(name);
      length += 1 + name.length;
    }
    lines.push(line.join(" "));
  }
  return lines;
}

/**
 * The last check of the generated text: each line names a shipped certificate file and 1 to CRT_LIST_NAMES_PER_LINE
 * host names, and nothing else (no `[ssl options]`, no `!` or `*` filter, which would widen what a file answers).
 */
export function checkCrtList(text: string, shippedFiles: ReadonlySet<string>): void {
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const [file, ...names] = line.split(" ");
    const malformed =
      !shippedFiles.has(file) ||
      line.length > HAPROXY_LINE_CHARACTERS ||
      names.length === 0 ||
      names.length > CRT_LIST_NAMES_PER_LINE ||
      names.some((name) => !HOST_NAME.test(name));
    if (malformed) throw new InvalidConfiguration(`crt-list.txt: malformed line ${JSON.stringify(line)}`);
  }
}
