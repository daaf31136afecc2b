// The console's entry point: who is signed in (held in memory only), the navigation, and which page the address's
// fragment (#/projects/shop) names.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { forgetCredentials, hasRateLimitToken } from "./api";
import { routeOf } from "./route";
import { html, PageBoundary } from "./ui";
import { SignIn, type Session } from "./pages/sign-in";
import { ProjectList } from "./pages/projects";
import { ProjectPage } from "./pages/project";
import { VersionsPage } from "./pages/versions";
import { AuditPage } from "./pages/audit";
import { JobsPage } from "./pages/jobs";
import { PreviewPage, StatusPage } from "./pages/preview";
import { HostsPage, UsersPage } from "./pages/admin";
import { RateLimitPage } from "./pages/ratelimit";

function useRoute(): string[] {
  const [route, setRoute] = useState(() => routeOf(location.hash) ?? []);
  useEffect(() => {
    const changed = () => {
      const next = routeOf(location.hash);
      if (next) setRoute(next);
    };
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

const TENANT_LINKS = [["projects", "Projects"]];
const OPERATOR_LINKS = [
  ["hosts", "Hosts"],
  ["users", "Users"],
  ["haproxy", "HAProxy versions"],
  ["sshproxy", "SSH proxy versions"],
  ["preview", "Next generation"],
  ["status", "Load balancers"],
  ["audit", "Audit log"],
  ["jobs", "Job runs"],
];

/** The skip link moves the focus itself: left to the browser, it would also replace the route in the address. */
function skipToMain(event: Event) {
  event.preventDefault();
  document.getElementById("main")?.focus();
}

type NavigationProps = { session?: Session; tokenHeld: boolean; current: string; signOut: () => void };

/** Who is signed in, with the way out: a rate limit token alone is a sign-in too, and is forgotten the same way. */
function SignedIn({ session, tokenHeld, signOut }: Omit<NavigationProps, "current">) {
  if (!session && !tokenHeld) return null;
  return html`<p class="who">
    <span>
      ${
        session
          ? html`Signed in as <strong>${session.username}</strong> (${session.admin ? "operator" : "tenant"})`
          : "Using the rate limit service's admin token"
      }
    </span>
    <button type="button" onClick=${signOut}>Sign out</button>
  </p>`;
}

function Navigation({ session, tokenHeld, current, signOut }: NavigationProps) {
  const links = [
    ...(session ? TENANT_LINKS : []),
    ...(session?.admin ? OPERATOR_LINKS : []),
    ["ratelimit", "Rate limits"],
  ];
  return html`<header>
    <a class="skip" href="#main" onClick=${skipToMain}>Skip to the page</a>
    <nav aria-label="Console">
      <ul>
        ${links.map(
          ([path, label]) =>
            html`<li><a href=${`#/${path}`} aria-current=${current === path ? "page" : undefined}>${label}</a></li>`,
        )}
      </ul>
    </nav>
    <${SignedIn} session=${session} tokenHeld=${tokenHeld} signOut=${signOut} />
  </header>`;
}

type PageProps = {
  route: string[];
  session?: Session;
  onSession: (s: Session) => void;
  tokenHeld: boolean;
  onToken: () => void;
};

function Page({ route, session, onSession, tokenHeld, onToken }: PageProps) {
  const [name = "", ...rest] = route;
  if (name === "ratelimit") return html`<${RateLimitPage} ready=${tokenHeld} onToken=${onToken} />`;
  if (!session) return html`<${SignIn} onSession=${onSession} />`;
  if (name === "projects" && rest[0]) return html`<${ProjectPage} label=${rest[0]} session=${session} />`;
  if (!session.admin || name === "projects" || name === "") return html`<${ProjectList} session=${session} />`;
  if (name === "hosts") return html`<${HostsPage} />`;
  if (name === "users") return html`<${UsersPage} />`;
  if (name === "haproxy" || name === "sshproxy") return html`<${VersionsPage} kind=${name} selected=${rest[0]} />`;
  if (name === "preview") return html`<${PreviewPage} />`;
  if (name === "status") return html`<${StatusPage} />`;
  if (name === "audit") return html`<${AuditPage} />`;
  if (name === "jobs") return html`<${JobsPage} selected=${rest[0]} />`;
  return html`<${ProjectList} session=${session} />`;
}

function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | undefined>(undefined);
  const [tokenHeld, setTokenHeld] = useState(hasRateLimitToken());
  // A new page takes the keyboard focus to its content, as a page load would, and is announced by its title.
  const path = route.join("/");
  useEffect(() => {
    if (path !== "") document.getElementById("main")?.focus();
    document.title = `${path === "" ? "Sign in" : path} · Edge control plane console`;
  }, [path]);
  const signOut = () => {
    forgetCredentials();
    setSession(undefined);
    setTokenHeld(false);
    location.hash = "#/";
  };
  const onToken = () => setTokenHeld(true);
  return html`<${Navigation} session=${session} tokenHeld=${tokenHeld} current=${route[0] ?? ""} signOut=${signOut} />
    <main id="main" tabindex="-1">
      <${PageBoundary} key=${path}>
        <${Page} route=${route} session=${session} onSession=${setSession} tokenHeld=${tokenHeld} onToken=${onToken} />
      <//>
    </main>
    <footer>
      <p>
        Words used here are explained in the <a href="/console/glossary.txt">glossary</a>; the APIs themselves are
        described at <a href="/docs">/docs</a>.
      </p>
    </footer>`;
}

const root = document.getElementById("console")!;
// The page's "Loading" text goes: render adds beside what is there.
root.textContent = "";
render(html`<${App} />`, root);
