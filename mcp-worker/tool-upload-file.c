/* SPDX-License-Identifier: ISC */
/*
 * tool-upload-file.c: a file of this machine to where the notebook's
 * kernel runs (worker-files.c): its Jupyter Server, or a copy here.
 */

#include "worker.h"

const struct tool_entry tool_upload_file_entry = {
	.name = "upload_file",
	.description = "Copy host_path to kernel_path where the notebook's "
	    "kernel runs; SHA-256 checked, 1 GiB cap.",
	.input_schema = "{\"type\":\"object\",\"properties\":{"
	    WORKER_TARGET_PROPS ","
	    "\"host_path\":{\"type\":\"string\"},"
	    "\"kernel_path\":{\"type\":\"string\"},"
	    "\"overwrite\":{\"type\":\"boolean\"}}}",
	.output_schema = WORKER_FILES_SCHEMA,
	.read_only = 0,
	.destructive = 1,
	.idempotent = 1,
	.handler = worker_files_upload,
};
