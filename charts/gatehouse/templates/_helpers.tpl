{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "gatehouse.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-scoped base name of every object. */}}
{{- define "gatehouse.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gatehouse.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "gatehouse.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of one component (operator, gateway, postgresql, redis). */}}
{{- define "gatehouse.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gatehouse.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "gatehouse.componentLabels" -}}
{{ include "gatehouse.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "gatehouse.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "gatehouse.operatorServiceAccount" -}}
{{ include "gatehouse.fullname" . }}-operator
{{- end }}

{{- define "gatehouse.gatewayServiceAccount" -}}
{{ include "gatehouse.fullname" . }}-gateway
{{- end }}

{{- define "gatehouse.secretName" -}}
{{ .Values.secrets.existingSecret | default (printf "%s-secrets" (include "gatehouse.fullname" .)) }}
{{- end }}

{{- define "gatehouse.postgresqlSecretName" -}}
{{ .Values.postgresql.existingSecret | default (printf "%s-postgresql" (include "gatehouse.fullname" .)) }}
{{- end }}

{{- define "gatehouse.redisSecretName" -}}
{{ .Values.redis.existingSecret | default (printf "%s-redis" (include "gatehouse.fullname" .)) }}
{{- end }}

{{- define "gatehouse.postgresqlBundled" -}}
{{- if and .Values.postgresql.bundled.enabled (not .Values.postgresql.existingSecret) }}true{{ end }}
{{- end }}

{{- define "gatehouse.redisBundled" -}}
{{- if and .Values.redis.bundled.enabled (not .Values.redis.existingSecret) }}true{{ end }}
{{- end }}

{{/* Environment both planes share: the secrets and the Redis URL. */}}
{{- define "gatehouse.sharedEnv" -}}
- name: GATEHOUSE_KEY_PEPPER
  valueFrom:
    secretKeyRef:
      name: {{ include "gatehouse.secretName" . }}
      key: {{ .Values.secrets.keyPepperKey }}
- name: GATEHOUSE_ENCRYPTION_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "gatehouse.secretName" . }}
      key: {{ .Values.secrets.encryptionKeyKey }}
- name: GATEHOUSE_GATEWAY_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "gatehouse.secretName" . }}
      key: {{ .Values.secrets.gatewayTokenKey }}
{{- if or .Values.redis.existingSecret .Values.redis.bundled.enabled }}
- name: GATEHOUSE_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "gatehouse.redisSecretName" . }}
      key: {{ .Values.redis.secretKey }}
{{- end }}
{{- end }}

{{/* Graceful shutdown: stay in the endpoints' removal window before SIGTERM starts the drain. */}}
{{- define "gatehouse.preStop" -}}
lifecycle:
  preStop:
    exec:
      command: ["sleep", "{{ . }}"]
{{- end }}

{{- define "gatehouse.probes" -}}
startupProbe:
  httpGet: { path: /livez, port: http }
  periodSeconds: 2
  failureThreshold: 30
livenessProbe:
  httpGet: { path: /livez, port: http }
  periodSeconds: 10
  timeoutSeconds: 2
  failureThreshold: 3
readinessProbe:
  httpGet: { path: /readyz, port: http }
  periodSeconds: 5
  timeoutSeconds: 2
  failureThreshold: 2
{{- end }}

{{/* Sidecar mode: the webhook configuration whose caBundle the operator keeps current. */}}
{{- define "gatehouse.webhookConfigurationName" -}}
{{ include "gatehouse.fullname" . }}-sidecar-injector
{{- end }}

{{/* Operator env of the sidecar injector (webhook listener, certificates, what it injects). */}}
{{- define "gatehouse.sidecarInjectorEnv" -}}
{{- if .Values.sidecarInjector.enabled }}
{{- $service := printf "%s-webhook" (include "gatehouse.fullname" .) }}
{{- $sidecar := .Values.sidecarInjector.sidecar }}
- name: GATEHOUSE_WEBHOOK_PORT
  value: {{ .Values.sidecarInjector.port | quote }}
- name: GATEHOUSE_WEBHOOK_SERVICE
  value: {{ $service | quote }}
{{- if eq .Values.sidecarInjector.certificates.mode "cert-manager" }}
- name: GATEHOUSE_WEBHOOK_CERT_DIR
  value: /var/run/gatehouse/webhook-tls
{{- else }}
- name: GATEHOUSE_WEBHOOK_SECRET
  value: {{ printf "%s-tls" $service | quote }}
- name: GATEHOUSE_WEBHOOK_CONFIGURATION
  value: {{ include "gatehouse.webhookConfigurationName" . | quote }}
{{- end }}
- name: GATEHOUSE_SIDECAR_IMAGE
  value: {{ include "gatehouse.image" . | quote }}
- name: GATEHOUSE_SIDECAR_IMAGE_PULL_POLICY
  value: {{ .Values.image.pullPolicy | quote }}
- name: GATEHOUSE_SIDECAR_CONTROL_PLANE_URL
  value: {{ printf "http://%s-operator.%s.svc:%v" (include "gatehouse.fullname" .) .Release.Namespace .Values.operator.service.port | quote }}
- name: GATEHOUSE_SIDECAR_PORT
  value: {{ $sidecar.port | quote }}
- name: GATEHOUSE_SIDECAR_HEALTH_PORT
  value: {{ $sidecar.healthPort | quote }}
- name: GATEHOUSE_SIDECAR_LOG_LEVEL
  value: {{ $sidecar.logLevel | quote }}
- name: GATEHOUSE_SIDECAR_CPU
  value: {{ $sidecar.resources.cpu | quote }}
- name: GATEHOUSE_SIDECAR_MEMORY
  value: {{ $sidecar.resources.memory | quote }}
- name: GATEHOUSE_SIDECAR_MEMORY_LIMIT
  value: {{ $sidecar.resources.memoryLimit | quote }}
{{- end }}
{{- end }}
