/** Deployment: a named, typed (production / non-production) binding of a Config to workspaces. */
import { z } from 'zod'
import { displayName, objectName, rules, slug } from './shared.ts'
import type { KindDefinition } from './kind.ts'

/** Namespace names are DNS labels. */
const namespaceName = (description: string) =>
  z.string().min(1).max(63).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).describe(description)

/**
 * Which pods may run a Gatehouse sidecar of this deployment: the control plane checks the pod's
 * ServiceAccount token (TokenReview, audience gatehouse) against these lists before it sends the
 * pod a snapshot, and the pod's requests run as the bound workspace.
 */
export const sidecarBinding = rules(
  z
    .strictObject({
      workspace: objectName('Name of the Workspace (in this namespace, and served by this deployment) the sidecar calls models as.'),
      serviceAccounts: z
        .array(
          z
            .strictObject({
              namespace: namespaceName('Namespace of the service account.'),
              name: objectName('Name of the service account.'),
            })
            .describe('One service account admitted by name.'),
        )
        .max(256)
        .optional()
        .describe('Service accounts whose pods are admitted.'),
      namespaces: z
        .array(namespaceName('A namespace every service account of which is admitted.'))
        .max(256)
        .optional()
        .meta({ 'x-kubernetes-list-type': 'set' })
        .describe('Namespaces all of whose service accounts are admitted.'),
    })
    .describe('Sidecar binding: the service accounts and namespaces whose pods may run this deployment as an injected sidecar, and the workspace they act as.'),
  [
    {
      rule: '(has(self.serviceAccounts) && size(self.serviceAccounts) > 0) || (has(self.namespaces) && size(self.namespaces) > 0)',
      message: 'a sidecar binding admits at least one service account or namespace',
      check: (s) => (s.serviceAccounts?.length ?? 0) > 0 || (s.namespaces?.length ?? 0) > 0,
    },
  ],
)

export const deploymentSpec = rules(
  z
    .strictObject({
      name: displayName('deployment').optional(),
      slug: slug('deployment').optional(),
      type: z.enum(['production', 'non-production']).describe('Environment class of the deployment.'),
      config: objectName('Name of the Config (in this namespace) the deployment serves.'),
      allowAllWorkspaces: z
        .boolean()
        .optional()
        .describe('Every workspace may use the deployment. Mutually exclusive with workspaces.'),
      workspaces: z
        .array(objectName('Name of a Workspace in this namespace.'))
        .max(256)
        .optional()
        .meta({ 'x-kubernetes-list-type': 'set' })
        .describe('Workspaces allowed to use the deployment. Mutually exclusive with allowAllWorkspaces.'),
      sidecar: sidecarBinding.optional(),
    })
    .describe('Desired state of the Deployment.'),
  [
    {
      rule: '!(has(self.allowAllWorkspaces) && self.allowAllWorkspaces && has(self.workspaces) && size(self.workspaces) > 0)',
      message: 'allowAllWorkspaces and workspaces are mutually exclusive',
      fieldPath: '.workspaces',
      check: (s) => !(s.allowAllWorkspaces === true && (s.workspaces?.length ?? 0) > 0),
    },
  ],
)

export const deploymentKind: KindDefinition = {
  kind: 'Deployment',
  plural: 'deployments',
  // `kubectl get deployments` resolves to apps/v1; these names (or deployments.gatehouse.dev) reach ours.
  shortNames: ['ghdeploy', 'ghd'],
  description: 'Deployment binds a Config to a slug, a type (production or non-production) and the workspaces allowed to use it. Address it as ghd, ghdeploy or deployments.gatehouse.dev (plain "deployments" means apps/v1); kubectl get gatehouse lists every Gatehouse object.',
  spec: deploymentSpec,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type', description: 'production or non-production.' },
    { name: 'Config', type: 'string', jsonPath: '.spec.config', description: 'Served Config.' },
  ],
  selectableFields: ['.spec.type', '.spec.config'],
}

export type DeploymentSpec = z.infer<typeof deploymentSpec>
export type SidecarBinding = z.infer<typeof sidecarBinding>
