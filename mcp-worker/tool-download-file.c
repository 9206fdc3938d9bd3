/* SPDX-License-Identifier: ISC */
/*
 * tool-download-file.c: a file from where the notebook's kernel runs
 * (its Jupyter Server, or here) to this machine (worker-files.c).
 */

#include "worker.h"

const struct tool_entry tool_download_file_entry = {
	.name = "download_file",
	.description = "Copy kernel_path, where the notebook's kernel "
	    "runs, to host_path; SHA-256 checked, 1 GiB cap.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"kernel_path\":{\"type\":\"string\"},"
	    "\"host_path\":{\"type\":\"string\"},"
	    "\"overwrite\":{\"type\":\"boolean\"}}}",
	.output_schema = WORKER_FILES_SCHEMA,
	.read_only = 0,
	.destructive = 1,
	.idempotent = 1,
	.handler = worker_files_download,
};
