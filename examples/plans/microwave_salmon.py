def microwave_salmon():
	# 0: walk to kitchen
	walk('kitchen')
	# 1: find salmon
	find('salmon')
	# 2: grab salmon
	assert('close' to 'salmon' )
		else: find('salmon')
	grab('salmon')
	# 3: open the microwave
	find('microwave')
	assert('close' to 'microwave' )
		else: find('microwave')
	assert('microwave' is 'closed' )
		else: close('microwave')
	open('microwave')
	# 4: put salmon in the microwave
	assert('salmon' in 'hands' )
		else: find('salmon')
		else: grab('salmon')
	assert('close' to 'microwave' )
		else: find('microwave')
	assert('microwave' is 'opened' )
		else: open('microwave')
	putin('salmon', 'microwave')
	# 5: close the microwave
	assert('close' to 'microwave' )
		else: find('microwave')
	assert('microwave' is 'opened' )
		else: open('microwave')
	close('microwave')
	# 6: switch on the microwave
	assert('microwave' is 'closed' )
		else: close('microwave')
	assert('microwave' is 'switchoff' )
		else: switchoff('microwave')
	switchon('microwave')
	# 7: Done
