from trainlint.cli import run

run()
