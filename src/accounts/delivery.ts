import type { FastifyBaseLogger } from 'fastify';
import { renderMail, type Mailer } from '../mail/service.js';
import { acceptUrl, setupUrl, type InvitationView } from './rules.js';
import type { SentInvitation } from './store.js';

/*
 * How account links reach their person: by mail when SMTP_URL is set; otherwise an owner gets
 * the invitation link to hand over (one that makes a membership only when accepted) and resets
 * go through the operator's CLI. The messages say the same whatever the address's account.
 */

export interface DeliveryDeps {
  mail: Mailer;
  serviceBaseUrl: string;
  log: FastifyBaseLogger;
}

export interface InvitationAnswer {
  message: string;
  invitation: InvitationView;
  mailed: boolean;
  inviteUrl: string | null;
}

const ROLE_WORDS: Record<string, string> = { owner: 'an owner', editor: 'an editor', author: 'an author', contributor: 'a contributor' };
const roleWords = (role: string) => ROLE_WORDS[role] ?? `a ${role}`;

export function invitationMail(siteName: string, role: string, url: string) {
  return renderMail({
    subject: `You are invited to ${siteName}`,
    heading: `An invitation to ${siteName}`,
    paragraphs: [
      `You are invited to work on ${siteName} as ${roleWords(role)}.`,
      'Open the link to accept. If you already have an account on this service, sign in with your own password there; if not, you choose a password and your account is made. The invitation is valid for 7 days.',
    ],
    action: { label: 'Accept the invitation', url },
    footer: 'If you did not expect this, ignore this message: nothing happens unless you accept.',
  });
}

export function resetMail(url: string) {
  return renderMail({
    subject: 'Set a new password',
    heading: 'Set a new password',
    paragraphs: ['Someone (you, we hope) asked for a new password for your account. Open the link to choose one: it works once, within 24 hours, and signs you out everywhere else.'],
    action: { label: 'Choose a new password', url },
    footer: 'If you did not ask for this, ignore this message: your password stays as it is.',
  });
}

/** Mails an invitation (or, without mail, answers its link): one answer shape for every address. */
export async function deliverInvitation(deps: DeliveryDeps, site: { id: string; name: string }, sent: SentInvitation): Promise<InvitationAnswer> {
  const url = acceptUrl(deps.serviceBaseUrl, sent.token);
  const { invitation } = sent;
  if (deps.mail.configured) {
    await deps.mail.enqueue(site.id, { to: invitation.email, ...invitationMail(site.name, invitation.role, url) });
    return { message: `Invitation mailed to ${invitation.email} (valid 7 days)`, invitation, mailed: true, inviteUrl: null };
  }
  return {
    message: `Mail is not set up on this service: send ${invitation.email} this invitation link yourself (valid 7 days). They accept it with their own password if they have an account, or choose one if not.`,
    invitation,
    mailed: false,
    inviteUrl: url,
  };
}

/** Mails a reset link to the person who asked. Nothing is answered about it: see the forgot route. */
export async function deliverReset(deps: DeliveryDeps, found: { token: string; email: string; siteId: string }): Promise<void> {
  await deps.mail.enqueue(found.siteId, { to: found.email, ...resetMail(setupUrl(deps.serviceBaseUrl, found.token)) });
}
