"""PyTorch's kernel table for complex32 (ComplexHalf) on CPU: which ops refuse it, with the
messages PyTorch 2.13 gives (found by running its OpInfo samples on chalf tensors).

``KERNELS``: op name -> the kernel in ``"<kernel>" not implemented for 'ComplexHalf'``
(NotImplementedError); ``OTHER``: op name -> (exception class name, message) for the ops that
refuse complex inputs with a sentence of their own.
"""
from __future__ import annotations

_KERNEL_TEXT = """
acos=acos_vml_cpu acosh=acosh_cpu adaptive_avg_pool2d
adaptive_avg_pool3d=adaptive_avg_pool3d_cpu adaptive_max_pool1d=adaptive_max_pool2d
adaptive_max_pool2d adaptive_max_pool3d=adaptive_max_pool3d_cpu addbmm=addmm_impl_cpu_
addcdiv=addcdiv_cpu_out addmm=addmm_impl_cpu_ addmv=addmv_impl_cpu addr=addr_cpu
amax=max_values_cpu amin=min_values_cpu aminmax=aminmax_cpu angle=angle_cpu
asin=asin_vml_cpu asinh=asinh_cpu atan=atan_vml_cpu atan2=atan2_cpu atanh=atanh_cpu
avg_pool1d=avg_pool2d avg_pool2d avg_pool3d=avg_pool3d_out_frame baddbmm batch_norm
binary_cross_entropy binary_cross_entropy_with_logits=log_sigmoid_cpu bincount=bincount_cpu
bitwise_and=bitwise_and_cpu bitwise_left_shift=lshift_cpu bitwise_not=bitwise_not_cpu
bitwise_or=bitwise_or_cpu bitwise_right_shift=rshift_cpu bitwise_xor=bitwise_xor_cpu bmm
bucketize=searchsorted_out_cpu celu=elu_cpu channel_shuffle
cholesky_inverse=cholesky_inverse_out_cpu cholesky_solve=cholesky_solve_cpu
clamp_max=minimum_cpu clamp_min=maximum_cpu copysign=copysign_cpu corrcoef=sum_cpu
cos=cos_vml_cpu cosh=cosh_cpu cosine_embedding_loss=sum_cpu cov=sum_cpu cross
cross_entropy=log_softmax_lastdim_kernel_impl ctc_loss=ctc_loss_cpu cumprod=cumprod_out_cpu
cumulative_trapezoid=cumsum_out_cpu digamma div=div_cpu dot elu=elu_cpu erf=erf_vml_cpu
erfc=erfc_vml_cpu erfinv=erfinv_vml_cpu exp=exp_vml_cpu exp2 expm1=expm1_vml_cpu
floor_divide=div_floor_cpu fmod=fmod_cpu frac=frac_cpu
fractional_max_pool2d=fractional_max_pool2d_out_frame
fractional_max_pool3d=fractional_max_pool3d_out_frame gather=scatter_gather_tensor_cpu
gaussian_nll_loss=lt_cpu gcd=gcd_cpu ge=ge_cpu gelu=GeluKernelImpl geometric=geometric_cpu
geqrf=geqrf_cpu glu=glu_cpu gradient=div_cpu grid_sample=grid_sampler_2d_cpu_kernel_impl
grid_sampler_2d=grid_sampler_2d_cpu_kernel_impl grid_sampler_3d=grid_sampler3d_cpu
group_norm=GroupNormKernelImpl gt=gt_cpu hardshrink=hardshrink_cpu
hardsigmoid=hardsigmoid_cpu hardswish=hardswish_cpu hash_tensor=xor_sum_cpu
histc=linspace_cpu histogram=histogramdd histogramdd huber_loss=huber_cpu hypot=hypot_cpu
i0=i0_vml_cpu igamma=igamma_cpu igammac=igammac_cpu index_reduce=index_func_
instance_norm=batch_norm isin=isin_default_cpu kthvalue=kthvalue_cpu
layer_norm=LayerNormKernelImpl lcm=lcm_cpu ldexp=pow le=le_cpu leaky_relu=leaky_relu_cpu
lerp=lerp_kernel_scalar lgamma=lgamma_vml_cpu linalg.cond=linalg_svd_cpu linalg.cross=cross
linalg.eig=linalg_eig_out_cpu linalg.eigvals=linalg_eig_out_cpu
linalg.householder_product=orgqr_cpu linalg.ldl_solve=ldl_solve_kernel_cpu linalg.lu=lu_cpu
linalg.lu_factor=lu_cpu linalg.lu_factor_ex=lu_cpu linalg.lu_solve=linalg.lu_solve_cpu
linalg.matrix_power=eye linalg.qr=geqrf_cpu linalg.solve=lu_cpu linalg.solve_ex=lu_cpu
linalg.solve_triangular=triangular_solve_cpu linalg.tensorsolve=lu_cpu linalg.vecdot=vdot
linear_cross_entropy=addmm_impl_cpu_ local_response_norm=avg_pool2d log=log_vml_cpu
log10=log10_vml_cpu log1p=log1p_vml_cpu log2=log2_vml_cpu log_normal=log_normal_cpu
log_softmax=log_softmax_lastdim_kernel_impl logaddexp=logaddexp_cpu
logaddexp2=logaddexp2_cpu logcumsumexp=logcumsumexp_out_cpu logical_and=logical_and_cpu
logical_not=logical_not_cpu logical_or=logical_or_cpu logical_xor=logical_xor_cpu
logit=logit_cpu logsigmoid=log_sigmoid_cpu logsumexp=exp_vml_cpu lt=lt_cpu lu=lu_cpu
lu_unpack=scatter_gather_scalar_cpu masked_scatter matmul=dot matrix_exp=bmm
max_pool1d=max_pool2d max_pool2d max_pool2d_with_indices_backward=max_pool2d max_pool3d
max_unpool1d=max_unpool2d max_unpool2d max_unpool3d mean=sum_cpu median=median_cpu
mish=mish_cpu mode=mode_cpu mse_loss=mse_cpu multi_head_attention_forward=addmm_impl_cpu_
multi_margin_loss=multi_margin_loss_cpu_kernel
multilabel_margin_loss=multilabel_margin_loss_forward_out_frame
multilabel_soft_margin_loss=log_sigmoid_cpu mv=addmv_impl_cpu mvlgamma=arange_cpu nan_to_num
nanmedian=median_cpu native_batch_norm=batch_norm native_group_norm=GroupNormKernelImpl
native_layer_norm=LayerNormKernelImpl nextafter=nextafter_cpu nll_loss=nll_loss_out_frame
normalize=div_cpu ormqr=ormqr_cpu pca_lowrank=addmm_impl_cpu_ poisson_nll_loss=exp_vml_cpu
polygamma=trigamma pow prelu=prelu_cpu prod=prod_out_cpu put=take_put_cpu qr=geqrf_cpu
reciprocal=reciprocal_cpu remainder=remainder_cpu rms_norm round=round_vml_cpu
rrelu=rrelu_with_noise_out_cpu rsqrt=rsqrt_cpu scaled_dot_product_attention=bmm
scatter=scatter_gather_tensor_cpu scatter_add=scatter_gather_tensor_cpu
scatter_reduce=scatter_reduce_exclude_input_init selu=elu_cpu sigmoid=sigmoid_cpu
silu=silu_cpu sin=sin_vml_cpu sinc=sinc_cpu sinh=sinh_cpu smooth_l1_loss=smooth_l1_cpu
soft_margin_loss=exp_vml_cpu softmax=softmax_lastdim_kernel_impl
softmin=softmax_lastdim_kernel_impl softplus=softplus_cpu softshrink=softshrink_check
softsign=div_cpu special.airy_ai=airy_ai_cpu special.bessel_j0=bessel_j0_cpu
special.bessel_j1=bessel_j1_cpu special.bessel_y0=bessel_y0_cpu
special.bessel_y1=bessel_y1_cpu special.chebyshev_polynomial_t=chebyshev_polynomial_t_cpu
special.chebyshev_polynomial_u=chebyshev_polynomial_u_cpu
special.chebyshev_polynomial_v=chebyshev_polynomial_v_cpu
special.chebyshev_polynomial_w=chebyshev_polynomial_w_cpu special.entr=entr_cpu
special.erfcx=erfcx_cpu special.hermite_polynomial_h=hermite_polynomial_h_cpu
special.hermite_polynomial_he=hermite_polynomial_he_cpu special.i0e=i0e_cpu
special.i1=i1_cpu special.i1e=i1e_cpu
special.laguerre_polynomial_l=laguerre_polynomial_l_cpu
special.legendre_polynomial_p=legendre_polynomial_p_cpu special.log_ndtr=log_ndtr_cpu
special.modified_bessel_i0=modified_bessel_i0_cpu
special.modified_bessel_i1=modified_bessel_i1_cpu
special.modified_bessel_k0=modified_bessel_k0_cpu
special.modified_bessel_k1=modified_bessel_k1_cpu special.ndtr=erf_vml_cpu
special.ndtri=ndtri_cpu special.polygamma=trigamma
special.scaled_modified_bessel_k0=scaled_modified_bessel_k0_cpu
special.scaled_modified_bessel_k1=scaled_modified_bessel_k1_cpu
special.shifted_chebyshev_polynomial_t=shifted_chebyshev_polynomial_t_cpu
special.shifted_chebyshev_polynomial_u=shifted_chebyshev_polynomial_u_cpu
special.shifted_chebyshev_polynomial_v=shifted_chebyshev_polynomial_v_cpu
special.shifted_chebyshev_polynomial_w=shifted_chebyshev_polynomial_w_cpu
special.spherical_bessel_j0=spherical_bessel_j0_cpu special.xlog1py=xlog1py_cpu
special.zeta=zeta_cpu sqrt=sqrt_vml_cpu square=pow sum=sum_cpu sum_to_size=sum_cpu
svd_lowrank=addmm_impl_cpu_ take=take_cpu take_along_dim=scatter_gather_tensor_cpu
tan=tan_vml_cpu tanh=tanh_vml_cpu tanhshrink=tanh_vml_cpu tensordot=addmm_impl_cpu_
threshold=threshold_cpu trace trapezoid=sum_cpu trapz=sum_cpu
triangular_solve=triangular_solve_cpu true_divide=div_cpu unfold=im2col_out_cpu unique
unique_consecutive=unique vdot xlogy=xlogy_cpu"""


KERNELS = dict((p.split("=") + [p])[:2] for p in _KERNEL_TEXT.split())

OTHER = {'argmax': ('RuntimeError', 'argmax(): does not support complex input'),
 'argmin': ('RuntimeError', 'argmin(): does not support complex input'),
 'argsort': ('RuntimeError', ' Sort does not support complex dtypes on CPU'),
 'cauchy': ('RuntimeError',
            'Cauchy distribution is a continuous probability distribution. dtype must be a '
            'floating point but you specified c10::complex<c10::Half>'),
 'cdist': ('RuntimeError', 'cdist only supports floating-point dtypes, X1 got: ComplexHalf'),
 'ceil': ('NotImplementedError', 'ceil is not supported for complex inputs'),
 'clamp': ('NotImplementedError', 'clamp is not supported for complex types'),
 'cosine_similarity': ('RuntimeError',
                       'expected common dtype to be floating point, yet common dtype is '
                       'ComplexHalf'),
 'deg2rad': ('RuntimeError', 'deg2rad is not supported for complex tensors.'),
 'embedding_bag': ('RuntimeError',
                   "Expected tensor for argument #1 'weight' to have one of the following scalar "
                   'types: Half, BFloat16, Float, Double; but got CPUComplexHalfType instead '
                   '(while checking arguments for embedding_bag)'),
 'exponential': ('RuntimeError',
                 'Exponential distribution is a continuous probability distribution. dtype must '
                 'be a floating point but you specified ComplexHalf'),
 'fft.fft': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.fft2': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.fftn': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.hfft': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.hfft2': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.hfftn': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.ifft': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.ifft2': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.ifftn': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.ihfft': ('RuntimeError', 'ihfft expects a real input tensor, but got ComplexHalf'),
 'fft.ihfft2': ('RuntimeError', 'Only supports floating-point dtypes, but found: ComplexHalf'),
 'fft.ihfftn': ('RuntimeError', 'Only supports floating-point dtypes, but found: ComplexHalf'),
 'fft.irfft': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.irfft2': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.irfftn': ('RuntimeError', "MKL FFT doesn't support tensors of type: Half"),
 'fft.rfft': ('RuntimeError', 'rfft expects a real input tensor, but got ComplexHalf'),
 'fft.rfft2': ('RuntimeError', 'rfftn expects a real-valued input tensor, but got ComplexHalf'),
 'fft.rfftn': ('RuntimeError', 'rfftn expects a real-valued input tensor, but got ComplexHalf'),
 'floor': ('NotImplementedError', 'floor is not supported for complex inputs'),
 'fmax': ('RuntimeError', 'fmax not implemented for complex tensors.'),
 'fmin': ('RuntimeError', 'fmin not implemented for complex tensors.'),
 'frexp': ('RuntimeError', 'torch.frexp() only supports floating-point dtypes'),
 'hardtanh': ('NotImplementedError', 'clamp is not supported for complex types'),
 'heaviside': ('RuntimeError', 'heaviside is not yet implemented for complex tensors.'),
 'hinge_embedding_loss': ('NotImplementedError', 'clamp is not supported for complex types'),
 'isneginf': ('RuntimeError', 'isneginf does not support complex inputs.'),
 'isposinf': ('RuntimeError', 'isposinf does not support complex inputs.'),
 'kl_div': ('RuntimeError', 'kl_div: Complex inputs not supported.'),
 'linalg.inv': ('RuntimeError', 'linalg.inv: Low precision dtypes not supported. Got ComplexHalf'),
 'linalg.inv_ex': ('RuntimeError',
                   'linalg.inv: Low precision dtypes not supported. Got ComplexHalf'),
 'linalg.lstsq': ('RuntimeError',
                  "This function doesn't handle types other than float and double"),
 'linalg.matrix_rank': ('RuntimeError',
                        "This function doesn't handle types other than float and double"),
 'linalg.pinv': ('RuntimeError',
                 'linalg.pinv(ComplexHalf{[5, 5]}): expected a tensor with 2 or more dimensions '
                 'of float, double, cfloat or cdouble types'),
 'linalg.slogdet': ('RuntimeError',
                    'linalg.slogdet: Low precision dtypes not supported. Got ComplexHalf'),
 'linalg.tensorinv': ('RuntimeError',
                      'linalg.inv: Low precision dtypes not supported. Got ComplexHalf'),
 'linalg.vander': ('RuntimeError',
                   'linalg.vander supports floating point, complex, and integer tensors, but got '
                   'ComplexHalf'),
 'logdet': ('RuntimeError', 'logdet: Low precision dtypes not supported. Got ComplexHalf'),
 'margin_ranking_loss': ('NotImplementedError', 'clamp is not supported for complex types'),
 'max': ('RuntimeError', 'max(): does not support complex input'),
 'maximum': ('RuntimeError', 'maximum not implemented for complex tensors.'),
 'min': ('RuntimeError', 'min(): does not support complex input'),
 'minimum': ('RuntimeError', 'minimum not implemented for complex tensors.'),
 'msort': ('RuntimeError', ' Sort does not support complex dtypes on CPU'),
 'multinomial': ('RuntimeError',
                 'multinomial only supports floating-point dtypes for input, got: ComplexHalf'),
 'nanmean': ('RuntimeError', 'nansum on CPU does not support complex inputs'),
 'nanquantile': ('RuntimeError', 'quantile() input tensor must be either float or double dtype'),
 'nansum': ('RuntimeError', 'nansum on CPU does not support complex inputs'),
 'normal': ('RuntimeError', 'normal expects standard deviation to be non-complex'),
 'one_hot': ('RuntimeError', 'one_hot is only applicable to index tensor of type LongTensor.'),
 'pdist': ('RuntimeError', 'pdist only supports floating-point dtypes'),
 'pinverse': ('RuntimeError',
              'linalg.pinv(ComplexHalf{[5, 5]}): expected a tensor with 2 or more dimensions of '
              'float, double, cfloat or cdouble types'),
 'polar': ('RuntimeError',
           'Expected both inputs to be Half, Float or Double tensors but got ComplexHalf and '
           'ComplexHalf'),
 'quantile': ('RuntimeError', 'quantile() input tensor must be either float or double dtype'),
 'rad2deg': ('RuntimeError', 'rad2deg is not supported for complex tensors.'),
 'randint_like': ('RuntimeError',
                  'check_random_bounds handles only integral, floating-point and boolean types'),
 'relu': ('NotImplementedError', 'clamp is not supported for complex types'),
 'relu6': ('NotImplementedError', 'clamp is not supported for complex types'),
 'sign': ('NotImplementedError',
          'Unlike NumPy, torch.sign is not intended to support complex numbers. Please use '
          'torch.sgn instead.'),
 'signbit': ('NotImplementedError', 'signbit is not implemented for complex tensors.'),
 'sort': ('RuntimeError', ' Sort does not support complex dtypes on CPU'),
 'topk': ('RuntimeError', ' topk does not support complex dtypes on CPU'),
 'trunc': ('NotImplementedError', 'trunc is not supported for complex inputs'),
 'unravel_index': ('TypeError', "expected 'indices' to be integer dtype, but got torch.complex32"),
 'view_as_complex': ('RuntimeError',
                     'view_as_complex is only supported for half, float and double tensors, but '
                     'got a tensor of scalar type: ComplexHalf')}
