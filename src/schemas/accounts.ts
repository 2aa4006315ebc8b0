import { Type } from '@sinclair/typebox';
import { MAX_PASSWORD_LENGTH } from '../accounts/rules.js';
import { StringEnum, Timestamp, envelope } from './common.js';

export const Role = StringEnum(
  ['owner', 'editor', 'author', 'contributor'],
  "`owner`: everything, including keys, users, webhooks and site settings; `editor`: every post, knowledge, generation, batches, tasks, stats; `author`: writes, publishes and deletes their own posts; `contributor`: writes their own drafts and submits them for review (cannot publish, schedule or delete a published post)",
);

const SiteOfSession = Type.Object({ id: Type.String(), name: Type.String(), handle: Type.String() });

export const Session = Type.Object({
  user: Type.Object({ id: Type.String(), email: Type.String(), displayName: Type.Union([Type.String(), Type.Null()], { description: 'The name readers see on their posts' }) }),
  site: SiteOfSession,
  role: Role,
  sites: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), handle: Type.String(), role: Role }), { description: 'Every site of the user' }),
});

// Lengths are checked by the store (one message for every too-short password); these bound the body only.
const Password = Type.String({ maxLength: MAX_PASSWORD_LENGTH });

export const SignInBody = Type.Object({ email: Type.String({ maxLength: 320 }), password: Password }, { examples: [{ email: 'owner@example.com', password: 'correct horse battery' }] });
export const SetupBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the setup or reset link (after #token=)' }),
  password: Type.String({ maxLength: MAX_PASSWORD_LENGTH, description: 'The new password: at least 10 characters' }),
}, { examples: [{ token: 'the token after #token= in the link', password: 'correct horse battery' }] });
export const ChangePasswordBody = Type.Object({ currentPassword: Password, newPassword: Password }, { examples: [{ currentPassword: 'correct horse battery', newPassword: 'staple battery horse correct' }] });
export const SwitchSiteBody = Type.Object({ siteId: Type.String({ minLength: 1, maxLength: 100 }) }, { examples: [{ siteId: '5f0c6f0e-8d3a-4a52-9b1e-2f7d6c1a9e10' }] });

export const SessionResponse = envelope(Type.Object({ session: Session }));
export const SignedInResponse = envelope(Type.Object({ message: Type.String(), session: Session }));
export const MessageResponse = envelope(Type.Object({ message: Type.String() }));

export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Role,
  createdAt: Timestamp,
});

export const Invitation = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Role,
  createdAt: Timestamp,
  sentAt: Timestamp,
  expiresAt: Timestamp,
  status: StringEnum(['pending', 'expired'], '`expired` after 7 days: send it again for a new week'),
});

export const UserListResponse = envelope(Type.Object({ users: Type.Array(User), invitations: Type.Array(Invitation, { description: 'Invitations not accepted yet' }) }));
export const CreateUserBody = Type.Object({ email: Type.String({ maxLength: 320 }), role: Role }, { examples: [{ email: 'editor@example.com', role: 'editor' }] });
export const PatchUserBody = Type.Object({ role: Role }, { examples: [{ role: 'owner' }] });
export const InvitationSentResponse = envelope(
  Type.Object({
    message: Type.String(),
    invitation: Invitation,
    mailed: Type.Boolean({ description: 'Whether the invitation was mailed to the address (SMTP_URL set)' }),
    inviteUrl: Type.Union([Type.String(), Type.Null()], {
      description:
        'Without mail only: the invitation link to hand to the person. It makes a membership only when accepted, with a new password for an email without an account, or after signing in with the account\'s own password. Null when mailed.',
    }),
  }),
);
export const UserResponse = envelope(Type.Object({ message: Type.String(), user: User }));
export const AcceptBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200, description: 'The token of the invitation link (after #token=)' }),
    password: Type.Optional(Type.String({ maxLength: MAX_PASSWORD_LENGTH, description: 'Without a session: the new password (an email without an account) or the account\'s own (an email with one)' })),
  },
  { examples: [{ token: 'the token after #token= in the invitation link', password: 'correct horse battery' }] },
);
export const ForgotBody = Type.Object({ email: Type.String({ maxLength: 320 }) }, { examples: [{ email: 'owner@example.com' }] });

export const ApiKey = Type.Object({
  id: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key' }),
  createdAt: Timestamp,
  lastUsedAt: Type.Union([Timestamp, Type.Null()], { description: 'Not recorded yet: always null' }),
  revokedAt: Type.Union([Timestamp, Type.Null()]),
});
export const KeyListResponse = envelope(Type.Object({ keys: Type.Array(ApiKey) }));
export const KeyCreatedResponse = envelope(Type.Object({ message: Type.String(), key: ApiKey, apiKey: Type.String({ description: 'The whole key, shown this once' }) }));
export const KeyRevokedResponse = envelope(Type.Object({ message: Type.String(), key: ApiKey }));

export const ProfileBody = Type.Object(
  { displayName: Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'The name readers see on your posts; empty or null shows none' }) },
  { examples: [{ displayName: 'Ada Lovelace' }] },
);
