// Starts `trainlint server` over stdio and hands it the files trainlint reads.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

// Every format trainlint reads: YAML, JSON, TOML, shell and batch scripts, Python.
const DOCUMENTS = [
  { scheme: "file", language: "yaml" },
  { scheme: "file", language: "json" },
  { scheme: "file", language: "toml" },
  { scheme: "file", language: "shellscript" },
  { scheme: "file", language: "python" },
  { scheme: "file", pattern: "**/*.{slurm,sbatch}" },
];

function activate(context) {
  const [command, ...args] = vscode.workspace
    .getConfiguration("trainlint")
    .get("command", ["trainlint", "server"]);
  const serverOptions = { command, args, transport: TransportKind.stdio };
  const clientOptions = { documentSelector: DOCUMENTS };
  client = new LanguageClient("trainlint", "trainlint", serverOptions, clientOptions);
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
