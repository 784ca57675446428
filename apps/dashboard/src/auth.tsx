// Sign-in (phone → code → workspace), the signed-in user and their workspaces, sign-out everywhere.
import { createContext, useContext, useState, type FormEvent } from 'react';
import { api, CLIENT_HEADER, session, unwrap } from './api/client';
import type { components } from './api/schema';
import { ErrorNote, useAction } from './ui';

export type Workspace = components['schemas']['MembershipDto'];

export interface Me {
  workspaces: Workspace[];
}

/** The signed-in user's workspaces (GET /auth/memberships): the switcher's list. */
export async function loadMe(): Promise<Me> {
  return { workspaces: await unwrap(api.GET('/auth/memberships')) };
}

export const MeContext = createContext<{ me: Me; workspace: Workspace; switchTo: (id: string) => void; signOut: () => Promise<void> } | null>(null);

export function useMe() {
  const me = useContext(MeContext);
  if (!me) throw new Error('useMe outside a session');
  return me;
}

const WORKSPACE_KEY = 'mr.workspace';

/** The workspace chosen last on this device (an id, not a secret), if the user is still in it. */
export function preferredWorkspace(workspaces: Workspace[]): Workspace | undefined {
  const last = localStorage.getItem(WORKSPACE_KEY);
  return workspaces.find((w) => w.id === last) ?? workspaces[0];
}

export function rememberWorkspace(id: string): void {
  localStorage.setItem(WORKSPACE_KEY, id);
  session.set({ workspaceId: id });
}

export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [phone, setPhone] = useState('');
  const [otp, setOtp] = useState('');
  const [sent, setSent] = useState(false);
  const { busy, error, run } = useAction();

  const send = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      await unwrap(api.POST('/auth/send-otp', { body: { phone } }));
      setSent(true);
    });
  };
  const verify = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const data = await unwrap(api.POST('/auth/verify-otp', { body: { phone, otp }, headers: CLIENT_HEADER }));
      session.set({ token: data.token });
      onSignedIn(await loadMe());
    });
  };

  return (
    <main className="signin" id="main">
      <h1>Sign in</h1>
      {!sent ? (
        <form onSubmit={send}>
          <label>
            Phone number
            <input type="tel" autoComplete="tel" required value={phone} onChange={(e) => setPhone(e.target.value)} placeholder="+44 7911 123456" />
          </label>
          <button type="submit" disabled={busy}>
            Send code
          </button>
        </form>
      ) : (
        <form onSubmit={verify}>
          <p className="muted">If {phone} has an account, a 6-digit code is on its way by SMS.</p>
          <label>
            Code
            <input inputMode="numeric" autoComplete="one-time-code" pattern="\d{6}" required value={otp} onChange={(e) => setOtp(e.target.value)} />
          </label>
          <button type="submit" disabled={busy}>
            Sign in
          </button>{' '}
          <button type="button" className="link" onClick={() => setSent(false)}>
            Use another number
          </button>
        </form>
      )}
      <ErrorNote error={error} />
    </main>
  );
}

export function WorkspaceSwitcher() {
  const { me, workspace, switchTo } = useMe();
  if (me.workspaces.length < 2) return <span className="ws">{workspace.name}</span>;
  return (
    <label className="ws">
      <span className="sr-only">Workspace</span>
      <select value={workspace.id} onChange={(e) => switchTo(e.target.value)}>
        {me.workspaces.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name} ({w.role}
            {w.suspended ? ', suspended' : ''})
          </option>
        ))}
      </select>
    </label>
  );
}
