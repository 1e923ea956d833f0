# METADATA
# title: unsupported-workload
# description: |
#   Fires once per file that looks like a GPU training workload but that no trainlint format
#   reads: a Kubernetes object of a kind it does not read (a RayCluster, a Kubeflow
#   Notebook) that requests GPUs, a template that requests GPUs, or a training config of a
#   tool it does not read yet (detectron2, DINOv2, OpenMMLab, SpeechBrain HyperPyYAML). The
#   finding points at the line that made it look like one and names the kind it saw; no other
#   rule checks the file, so its waste is unknown.
#   With `check --strict` it is an error, for gates that want every GPU workload checked.
# custom:
#   id: TL907
#   severity: info
#   category: input
#   why: |
#     A linter that passes what it does not understand reads like a clean bill: a RayCluster
#     holding four GPUs with no deadline, or a training config of an unread framework, would
#     otherwise give "No findings", exit 0. Saying which files were not understood tells a
#     platform team how much of its GPU spend the check actually covers.
#   example: |
#     # raycluster.yaml
#     apiVersion: ray.io/v1
#     kind: RayCluster
#     metadata: {name: train}
#     spec:
#       headGroupSpec:
#         template:
#           spec:
#             containers:
#               - name: ray-head
#                 image: rayproject/ray
#                 resources:
#                   limits:
#                     nvidia.com/gpu: 4
#   fix: |
#     # raycluster.yaml
#     # trainlint: ignore-file[TL907] its jobs are RayJobs in deploy/, checked there
#     apiVersion: ray.io/v1
#     kind: RayCluster
#     metadata: {name: train}
#     spec:
#       headGroupSpec:
#         template:
#           spec:
#             containers:
#               - name: ray-head
#                 image: rayproject/ray
#                 resources:
#                   limits:
#                     nvidia.com/gpu: 4
#   remediation: |
#     Check the workload in a form trainlint reads (a PyTorchJob, a SLURM or torchrun launch
#     script, a config of a documented format; `trainlint formats` lists them), declare its
#     facts with `# trainlint:` annotations in a script that launches it, or suppress the
#     notice with a reason. `trainlint show --files` lists what became of every file.
package trainlint.rules.unsupported_workload

import rego.v1

findings contains finding if {
	some i, workload in input.unsupported_workloads
	is_string(workload.kind)
	finding := {
		"message": concat("", [
			"not understood: ", workload.kind, "; none of trainlint's rules checked this GPU ",
			"workload (`trainlint formats` lists what it reads)",
		]),
		"pointer": sprintf("/unsupported_workloads/%d", [i]),
	}
}
