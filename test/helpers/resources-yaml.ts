/**
 * Resources YAML for suites that start embedded Gatehouse: a workspace and an OpenAI provider
 * pointing at a simulator, its key in a v1 Secret. Suites append their own objects.
 */
export function simulatorResourcesYaml(baseUrl: string, options: { workspace: string; workspaceName: string; apiKey: string }): string {
  return `
apiVersion: gatehouse.dev/v1alpha1
kind: Workspace
metadata: { name: ${options.workspace} }
spec: { name: ${options.workspaceName} }
---
apiVersion: gatehouse.dev/v1alpha1
kind: Provider
metadata: { name: sim }
spec:
  kind: openai
  workspace: ${options.workspace}
  baseUrl: ${baseUrl}
  secretRef: { name: sim-credentials, key: apiKey }
---
apiVersion: v1
kind: Secret
metadata: { name: sim-credentials }
data:
  apiKey: ${Buffer.from(options.apiKey).toString('base64')}
`
}
