{{/* The chart's name, overridable. */}}
{{- define "llm-render.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The resources' name: the release name, with the chart's name added unless it holds it. */}}
{{- define "llm-render.fullname" -}}
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

{{- define "llm-render.selectorLabels" -}}
app.kubernetes.io/name: {{ include "llm-render.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "llm-render.labels" -}}
{{ include "llm-render.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: render
{{- if .Values.helmLabels }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
{{- end }}

{{- define "llm-render.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "llm-render.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "llm-render.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Secret holding the state key, or "" when the server keeps a random key per process. */}}
{{- define "llm-render.stateKeySecret" -}}
{{- if .Values.stateKey.existingSecret }}
{{- .Values.stateKey.existingSecret }}
{{- else if .Values.stateKey.create }}
{{- printf "%s-state-key" (include "llm-render.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
