import { useEffect, useState } from 'preact/hooks';
import { api, errorMessage, type components } from '../../api.ts';
import { isManager, useCaller } from '../../caller.ts';
import { ConfirmDialog } from '../../confirm.tsx';
import { CopyField } from '../../copy.tsx';
import { useMutation } from '../../data.ts';

type InstallLink = components['schemas']['InstallLink'];

// The API mints links but never lists them (a link is a bearer token), so the page shows the link it
// just minted; every member may mint, rotation (which voids every older link) is for owners and admins.
export function InstallLinksPage({ organizationId }: { organizationId: string }) {
  const [caller] = useCaller(organizationId);
  const [link, setLink] = useState<InstallLink | null>(null);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const minting = useMutation(
    (rotate: boolean) =>
      api.POST('/v1/orgs/{organizationId}/install-links', { params: { path: { organizationId } }, body: { rotate } }),
    {
      progress: (rotate) => (rotate ? 'Rotating the install links…' : 'Creating an install link…'),
      success: (_, rotate) =>
        rotate
          ? 'Links rotated: every older install link stopped working; share this one instead.'
          : 'Install link created.',
      onSuccess: setLink,
    },
  );
  useEffect(() => {
    setLink(null);
    minting.reset();
  }, [organizationId]);
  const { pending: busy, error } = minting;
  const mint = (rotate: boolean) => {
    setConfirmRotate(false);
    void minting.mutate(rotate);
  };

  const manager = isManager(caller);
  return (
    <section aria-labelledby="install-heading">
      <h1 id="install-heading">Install links</h1>
      <p>
        An install link opens a page where people download the desktop app, already set up for this organization. Anyone
        holding the link sees the organization's name and this server's address.
      </p>
      <div class="actions-row">
        <button type="button" disabled={busy} onClick={() => mint(false)}>
          Create install link
        </button>
        {manager && (
          <button type="button" class="danger" disabled={busy} onClick={() => setConfirmRotate(true)}>
            Rotate install links
          </button>
        )}
      </div>
      {!manager && caller && (
        <p class="muted">Owners and admins can rotate the links, which stops every older one working.</p>
      )}
      <p role="status">{minting.status}</p>
      {error && (
        <p role="alert" class="form-error">
          {errorMessage(error)}
        </p>
      )}
      {link ? (
        <section class="secret" aria-label="New install link">
          <CopyField label="Install page link" id="install-page-url" value={link.installPageUrl} />
          <p>
            <a href={link.installPageUrl} target="_blank" rel="noreferrer">
              Open the install page
            </a>
          </p>
        </section>
      ) : (
        <p>
          No link on screen. Links are not listed once made: create one, then copy it and share it with the people who
          should install the app.
        </p>
      )}
      {confirmRotate && (
        <ConfirmDialog
          title="Rotate the install links?"
          message="Every install link made before now stops working at once, and a new one is made. People who have not installed yet need the new link."
          confirmLabel="Rotate links"
          onConfirm={() => mint(true)}
          onCancel={() => setConfirmRotate(false)}
        />
      )}
    </section>
  );
}
