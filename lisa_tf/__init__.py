"""lisa_tf: self-attention semantic role labelling in TensorFlow/Keras.

Three published models in one toolkit: DeepAtt (Tan et al. 2018), LISA and its syntax-free twin SA
(Strubell et al. 2018), and Selective Connection (Park 2019).
"""

__version__ = "0.1.0"
