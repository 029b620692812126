"""Embedding in one room: the packaged MiniLM (``packaged``), its ONNX export and int8
variant (``onnx``), the vector cache (``cache``) and the pipeline's embedder (``embedder``)."""
