// Traces what `haproxy -c` refused to the tenant backends it came from, so that a configuration one tenant broke can
// still be deployed for everybody else without that tenant's backend. Pure: it reads the ALERT lines the agent lists
// and the places of the backend sections in the generated haproxy.cfg.
import type { SectionPlace } from "./config";

/** What the ALERT lines of one refusal say: the backends to blame (by id, with their messages), and the rest. */
export interface Attribution {
  backends: Map<number, string[]>;
  /** ALERT lines that name no tenant backend: a refusal with any of them cannot be confined to tenants. */
  unattributed: string[];
}

/** HAProxy's closing lines, which repeat that errors were found and name nothing. */
const SUMMARY = /^(?:config\s*:\s*)?(?:Error\(s\) found in configuration file|Fatal errors found in configuration)/;
/** `parsing [<dir>/haproxy.cfg:42] : message` or `[<dir>/haproxy.cfg:42] : message` (post-parse checks of a line). */
const AT_LINE = /^(?:config\s*:\s*)?(?:parsing\s+)?\[(?:[^\]]*\/)?haproxy\.cfg:(\d+)\]\s*:?\s*(.*)$/;
/** `backend 'name' : message`, `Proxy 'name': message`, `proxy 'name' : message`: HAProxy's own prefix. */
const OF_PROXY = /^(?:config\s*:\s*)?(?:backend|Proxy|proxy)\s+'([^']+)'\s*:?\s*(.*)$/;
/** `'server name/server' : message`: a server line's post-parse check. */
const OF_SERVER = /^(?:config\s*:\s*)?'server ([^/']+)\/[^']*'\s*:?\s*(.*)$/;

/** What one ALERT line says: the haproxy.cfg line or the proxy it is about (HAProxy's own prefix), and the rest. */
export interface Alert {
  line?: number;
  proxy?: string;
  message: string;
}

/** Reads an ALERT line; undefined for HAProxy's closing lines, which name nothing. */
export function readAlert(alert: string): Alert | undefined {
  if (SUMMARY.test(alert)) return undefined;
  const atLine = AT_LINE.exec(alert);
  if (atLine) return { line: Number(atLine[1]), message: atLine[2] };
  const named = OF_PROXY.exec(alert) ?? OF_SERVER.exec(alert);
  return named ? { proxy: named[1], message: named[2] } : { message: alert };
}

/**
 * The section an ALERT names, by haproxy.cfg line number first (what HAProxy prints there cannot be written by a
 * tenant), else by the proxy name HAProxy puts at the start of the message. Tenant text quoted later in a message
 * never decides: a tenant cannot have another tenant's backend blamed by quoting its name.
 */
function sectionOf(alert: Alert, sections: readonly SectionPlace[], byName: Map<string, SectionPlace>) {
  if (alert.line !== undefined) {
    const line = alert.line;
    return sections.find((place) => place.firstLine <= line && line <= place.lastLine);
  }
  return alert.proxy === undefined ? undefined : byName.get(alert.proxy);
}

/** Sorts the ALERT lines of a refusal into blamed tenant backends and lines that name no tenant backend. */
export function attributeAlerts(alerts: readonly string[], sections: readonly SectionPlace[]): Attribution {
  const byName = new Map(sections.map((place) => [place.fqLabel, place]));
  const attribution: Attribution = { backends: new Map(), unattributed: [] };
  for (const text of alerts) {
    const alert = readAlert(text);
    if (!alert) continue;
    const section = sectionOf(alert, sections, byName);
    if (!section) {
      attribution.unattributed.push(text);
      continue;
    }
    const messages = attribution.backends.get(section.backendId);
    if (messages) messages.push(alert.message);
    else attribution.backends.set(section.backendId, [alert.message]);
  }
  return attribution;
}

/**
 * Whether a refusal names no line and no proxy at all (a `haproxy -c` that crashed says nothing else): only then may
 * leaving tenant backends out find its cause; a line outside tenant sections is nothing a tenant wrote.
 */
export const namesNothing = (alerts: readonly string[]) =>
  alerts.every((text) => {
    const alert = readAlert(text);
    return alert === undefined || (alert.line === undefined && alert.proxy === undefined);
  });
