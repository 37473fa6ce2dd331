/**
 * Who an identity provider's user is here: the one rule for JWT sign-in and OIDC (SSO) sign-in.
 *
 *   1. the user whose recorded subject is the token's `sub` (or, for JWTs, whose id it is);
 *   2. else the user with the token's email, whose subject is then recorded (refused when that
 *      user is linked to another subject, or the IdP says the email is unverified);
 *   3. else a pending invite for that email, accepted: the user gets the invite's roles;
 *   4. else, when auto-provisioning is on (SSO), a new user with the default role;
 *   5. else refused.
 * A disabled user is refused at every step.
 */
import { unauthenticated } from '../errors.ts'
import type { OrgRole, Store, UserRecord } from '../store/index.ts'

export interface SignInIdentity {
  subject: string
  email: string | null
  /** `email_verified` as the IdP sent it; false blocks linking and provisioning by email. */
  emailVerified?: boolean
  firstName?: string | null
  lastName?: string | null
}

export interface SignInOptions {
  /** JWTs may carry the Gatehouse user id itself as `sub`. */
  subjectMayBeUserId: boolean
  /** Create unknown users with this organisation role (null: refuse them). */
  provisionRole: Exclude<OrgRole, 'owner'> | null
}

export interface SignedInUser {
  user: UserRecord
  /** How the user was found: for the audit record. */
  via: 'subject' | 'email' | 'invite' | 'provisioned'
}

function active(user: UserRecord): UserRecord {
  if (user.status !== 'active') throw unauthenticated('this user is disabled')
  return user
}

export async function resolveSignInUser(store: Store, organizationId: string, identity: SignInIdentity, now: Date, options: SignInOptions): Promise<SignedInUser> {
  const bySubject = (await store.users.findBySubject(organizationId, identity.subject))
    ?? (options.subjectMayBeUserId ? await store.users.get(organizationId, identity.subject) : null)
  if (bySubject) return { user: active(bySubject), via: 'subject' }
  const email = identity.email
  if (!email) throw unauthenticated('the token\'s subject is not a user of this organisation')
  if (identity.emailVerified === false) throw unauthenticated('the identity provider says this email is not verified')
  const byEmail = await store.users.findByEmail(organizationId, email)
  if (byEmail) {
    if (byEmail.externalSubject !== null) throw unauthenticated('this email is linked to another identity')
    active(byEmail)
    return { user: (await store.users.update(organizationId, byEmail.id, { externalSubject: identity.subject }))!, via: 'email' }
  }
  const invite = await store.invites.pendingFor(organizationId, email, now)
  if (invite) {
    const user = await store.transaction(async (tx) => {
      const created = await tx.users.create({ organizationId, email, role: invite.role, externalSubject: identity.subject, firstName: identity.firstName ?? null, lastName: identity.lastName ?? null })
      for (const grant of invite.workspaces) await tx.members.upsert(grant.workspace_id, created.id, grant.role)
      await tx.invites.setStatus(organizationId, invite.id, 'accepted')
      return created
    })
    return { user, via: 'invite' }
  }
  if (options.provisionRole === null) throw unauthenticated('the token\'s subject is not a user of this organisation')
  const user = await store.users.create({ organizationId, email, role: options.provisionRole, externalSubject: identity.subject, firstName: identity.firstName ?? null, lastName: identity.lastName ?? null })
  return { user, via: 'provisioned' }
}
