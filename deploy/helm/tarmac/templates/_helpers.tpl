{{/*
Names, labels and the parts every pod shares, defined once: <release>-tarmac-<component>, the
app.kubernetes.io labels, the image, the envFrom of the ConfigMap and the Secret.
*/}}

{{- define "tarmac.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tarmac.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's name: (dict "root" $ "component" "api"). */}}
{{- define "tarmac.componentName" -}}
{{- printf "%s-%s" (include "tarmac.fullname" .root) .component -}}
{{- end -}}

{{- define "tarmac.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tarmac.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "tarmac.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{ include "tarmac.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: tarmac
{{- end -}}

{{- define "tarmac.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "tarmac.secretName" -}}
{{- default (include "tarmac.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{- define "tarmac.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tarmac.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The settings every process reads: the ConfigMap and the Secret. */}}
{{- define "tarmac.envFrom" -}}
- configMapRef:
    name: {{ include "tarmac.fullname" . }}
- secretRef:
    name: {{ include "tarmac.secretName" . }}
{{- end -}}

{{/* Pod-level settings of every pod: service account, pull secrets, scheduling. */}}
{{- define "tarmac.podCommon" -}}
serviceAccountName: {{ include "tarmac.serviceAccountName" . }}
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.pods.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.pods.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.pods.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Annotations of every pod: a changed ConfigMap or Secret rolls the pods. */}}
{{- define "tarmac.podAnnotations" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- with .Values.pods.annotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The blob volume (BLOB_STORE=fs) and the data directory, for pods that keep blobs or data. */}}
{{- define "tarmac.blobVolumeMount" -}}
{{- if eq .Values.blobs.store "fs" -}}
- name: blobs
  mountPath: {{ .Values.blobs.fs.mountPath }}
{{- end -}}
{{- end -}}

{{- define "tarmac.blobVolume" -}}
{{- if eq .Values.blobs.store "fs" -}}
- name: blobs
  persistentVolumeClaim:
    claimName: {{ required "blobs.fs.existingClaim is required with blobs.store=fs" .Values.blobs.fs.existingClaim }}
{{- end -}}
{{- end -}}

{{/* The client certificate and CA of Temporal's TLS (temporal.tls.existingSecret), for the apis and workers. */}}
{{- define "tarmac.temporalTlsVolumeMount" -}}
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.existingSecret -}}
- name: temporal-tls
  mountPath: /etc/tarmac/temporal-tls
  readOnly: true
{{- end -}}
{{- end -}}

{{- define "tarmac.temporalTlsVolume" -}}
{{- if and .Values.temporal.tls.enabled .Values.temporal.tls.existingSecret -}}
- name: temporal-tls
  secret:
    secretName: {{ .Values.temporal.tls.existingSecret }}
{{- end -}}
{{- end -}}

{{- /* The worker's build, WORKER_BUILD_ID with worker.versioning on: its buildId, else the image's tag. */ -}}
{{- define "tarmac.workerBuildId" -}}
{{- default (default .Chart.AppVersion .Values.image.tag) .Values.worker.versioning.buildId -}}
{{- end -}}

{{- /* The build as a label value and name suffix (DNS-1123: lower case, digits and "-"). */ -}}
{{- define "tarmac.workerBuildLabel" -}}
{{- regexReplaceAll "[^a-z0-9-]+" (include "tarmac.workerBuildId" . | lower) "-" | trunc 40 | trimAll "-" -}}
{{- end -}}

{{- /* The worker Deployment: one per build with worker.versioning on, so that builds run side by side. */ -}}
{{- define "tarmac.workerName" -}}
{{- $name := include "tarmac.componentName" (dict "root" . "component" "worker") -}}
{{- if .Values.worker.versioning.enabled -}}
{{- printf "%s-%s" $name (include "tarmac.workerBuildLabel" .) | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name -}}
{{- end -}}
{{- end -}}
