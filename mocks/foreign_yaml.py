"""YAML files of other tools that live beside scenarios in real projects: agentkit must leave
them alone (they are not scenarios)."""

#: A Kubernetes manifest.
K8S_MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
"""

#: A CI pipeline with a top-level `agents:` key (Buildkite's shape) but no `format:`.
CI_PIPELINE = "agents: {queue: default}\nsteps: []\n"
