"""VELMA's finetuned agent: LoRA adapters trained on navigation traces of training-area routes.

`traces` turns routes into the finetune template's text (the prompting agent's prompt without solved examples)
with the actions to learn marked; `tokens` cuts them into token ids and labels; `base` loads the base model
(the embedded GGUF dequantized by transformers, or a Hugging Face directory); `loop` trains (VELMA-FT teacher
forcing, VELMA-RBL response-based learning) with checkpoints, selection and a record; `lora_gguf` exports an
adapter in llama.cpp's LoRA GGUF format. Everything that imports torch, transformers or peft is imported lazily:
only the `train` extra needs them.
"""
