import { useStore } from '../lib/store';
import { session } from '../session';
import type { OpenDocument } from '../sync/connection';
import { usePeers } from '../sync/use-document';
import { Avatar } from '../ui/primitives';

/**
 * Who else has this surface open (one avatar per person, however many tabs
 * they have). The person's own other tabs and devices, and a state their
 * previous page left behind, carry their own id: they are not someone else.
 */
export function Presence(props: { document: OpenDocument | null }) {
  const peers = usePeers(props.document);
  const state = useStore(session);
  const me = state.status === 'signed-in' ? state.me.principal.id : null;
  const people = [...new Map(peers.filter((peer) => peer.user.id !== me).map((peer) => [peer.user.id, peer.user])).values()];
  if (people.length === 0) return null;
  return (
    <div class="presence" aria-label={`Also here: ${people.map((person) => person.name).join(', ')}`} data-testid="presence">
      {people.slice(0, 5).map((person) => (
        <Avatar key={person.id} id={person.id} name={person.name} size={26} ring title={`${person.name} is here`} />
      ))}
      {people.length > 5 && <span class="presence-more">+{people.length - 5}</span>}
    </div>
  );
}
