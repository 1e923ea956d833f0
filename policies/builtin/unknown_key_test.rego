package trainlint.rules.unknown_key

import rego.v1

test_typo_with_suggestion if {
	keys := [{"file": "a.yaml", "line": 4, "column": 1, "key": "save_step", "format": "hf-trainer", "suggestion": "save_steps"}]
	findings == {{
		"message": "unknown hf-trainer key 'save_step': did you mean 'save_steps'?; it is ignored, so its default applies",
		"pointer": "/unknown_keys/0",
	}} with input as {"unknown_keys": keys}
}

test_annotation_key_without_suggestion if {
	keys := [
		{"file": "a.yaml", "line": 1, "column": 1, "key": "gpu", "format": "x", "suggestion": null},
		{"file": "a.yaml", "line": 2, "column": 1, "key": "colour", "format": "axolotl", "suggestion": null},
	]
	result := findings with input as {"unknown_keys": keys}
	count(result) == 2
	some f in result
	f.pointer == "/unknown_keys/1"
	f.message == "unknown axolotl key 'colour'; it is ignored, so its default applies"
}

test_quiet_on_an_empty_job if {
	count(findings) == 0 with input as {}
}
