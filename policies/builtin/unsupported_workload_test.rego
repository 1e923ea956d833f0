package trainlint.rules.unsupported_workload

import rego.v1

test_one_finding_per_workload if {
	workloads := [
		{"file": "raycluster.yaml", "kind": "Kubernetes RayCluster (ray.io/v1)"},
		{"file": "mask_rcnn.yaml", "kind": "yacs config (detectron2-style SOLVER section)"},
	]
	result := findings with input as {"unsupported_workloads": workloads}
	count(result) == 2
	some finding in result
	finding.pointer == "/unsupported_workloads/1"
	startswith(finding.message, "not understood: yacs config (detectron2-style SOLVER section); none of trainlint's rules")
}

test_quiet_without_workloads if {
	count(findings) == 0 with input as {"unsupported_workloads": []}
}

test_quiet_on_a_job if {
	count(findings) == 0 with input as {"launcher": {"kind": "torchrun"}}
}
